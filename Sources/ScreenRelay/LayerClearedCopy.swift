import NIOCore

/// A frame with its layer bits cleared, for subscribers from before protocol 3 (which would take a layer id for
/// something else): one copy per frame, whatever the number of such subscribers — the last frame copied and its
/// copy are kept, and the next such subscriber of the same frame gets the same copy.
struct LayerClearedCopy {
    private var last: (original: ByteBuffer, copy: ByteBuffer)?

    mutating func copy(of buffer: ByteBuffer) -> ByteBuffer {
        // The same storage (a frame is forwarded as one shared buffer): compared by address, not by its bytes.
        if let last, last.original.readableBytes == buffer.readableBytes,
            last.original.withUnsafeReadableBytes({ $0.baseAddress }) == buffer.withUnsafeReadableBytes({ $0.baseAddress })
        {
            return last.copy
        }
        let copy = buffer.rewritingFrameFlags(\.withoutLayer)
        last = (buffer, copy)
        return copy
    }
}
