import NIOCore
import ScreenWire

extension ByteBuffer {
    /// A copy of this encoded video frame with its flags byte replaced: the frame's bytes are copied, so only a
    /// transport that cannot write a message in pieces goes through here (the in-process one).
    func replacingFrameFlags(_ flags: MediaFrameHeader.Flags) -> ByteBuffer {
        var copy = self
        let offset = copy.readerIndex + MediaFrameHeader.flagsOffset
        if copy.readableBytes > MediaFrameHeader.flagsOffset { copy.setInteger(flags.rawValue, at: offset) }
        return copy
    }

    /// This frame's flags byte (nil: too short to have one).
    var frameFlags: MediaFrameHeader.Flags? {
        getInteger(at: readerIndex + MediaFrameHeader.flagsOffset, as: UInt8.self).map(MediaFrameHeader.Flags.init(rawValue:))
    }

    /// This encoded video frame as the pieces of one message, with its flags byte replaced and nothing else copied:
    /// a small copy of the bytes up to the flags, then slices of the shared buffer of at most `pieceSize` bytes.
    func framePieces(flags: MediaFrameHeader.Flags, pieceSize: Int) -> [ByteBuffer] {
        let headLength = MediaFrameHeader.flagsOffset + 1
        guard readableBytes > headLength, pieceSize > 0 else { return [replacingFrameFlags(flags)] }
        var head = ByteBufferAllocator().buffer(capacity: headLength)
        head.writeImmutableBuffer(getSlice(at: readerIndex, length: MediaFrameHeader.flagsOffset) ?? ByteBuffer())
        head.writeInteger(flags.rawValue)
        var pieces = [head]
        var offset = headLength
        while offset < readableBytes {
            let length = Swift.min(pieceSize, readableBytes - offset)
            if let slice = getSlice(at: readerIndex + offset, length: length) { pieces.append(slice) }
            offset += length
        }
        return pieces
    }
}
