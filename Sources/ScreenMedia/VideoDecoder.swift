/// Decompresses frames. One decoder belongs to one thread.
public protocol VideoDecoder: AnyObject {
    var codec: VideoCodec { get }
    /// Decodes one compressed frame and lends each resulting picture, stamped with the given capture time,
    /// wall clock and metadata, to `body`.
    func decode(
        _ payload: UnsafeRawBufferPointer, captureTime: MediaTime, wallClock: WallClockTime, metadata: FrameMetadata,
        _ body: (VideoFrame) throws -> Void) throws
}

extension VideoDecoder {
    /// Decodes one compressed frame whose timing does not matter (tests, tools).
    public func decode(
        _ payload: UnsafeRawBufferPointer, metadata: FrameMetadata = .empty, _ body: (VideoFrame) throws -> Void
    ) throws {
        try decode(
            payload, captureTime: .zero, wallClock: WallClockTime(secondsSince1970: 0, nanoseconds: 0), metadata: metadata,
            body)
    }
}
