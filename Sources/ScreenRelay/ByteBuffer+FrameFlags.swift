import NIOCore
import ScreenWire

extension ByteBuffer {
    /// A copy of this encoded video frame with its flags byte rewritten by `change` (the relay clears layer bits
    /// for older subscribers and sets the catch-up bit): the frame's bytes are copied, so only frames that need it
    /// go through here.
    func rewritingFrameFlags(_ change: (MediaFrameHeader.Flags) -> MediaFrameHeader.Flags) -> ByteBuffer {
        var copy = self
        let offset = copy.readerIndex + MediaFrameHeader.flagsOffset
        if let value = copy.getInteger(at: offset, as: UInt8.self) {
            copy.setInteger(change(MediaFrameHeader.Flags(rawValue: value)).rawValue, at: offset)
        }
        return copy
    }
}
