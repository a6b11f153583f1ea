public import ScreenMedia
import ScreenRecording

/// A recording sink that opens its WebM file at the first frame, when the picture size is known.
public final class RecordingSink: EncodedFrameSink {
    public let path: String
    private let framesPerSecond: Double
    private var writer: WebMWriter?

    public init(path: String, framesPerSecond: Double) {
        self.path = path
        self.framesPerSecond = framesPerSecond
    }

    public var framesWritten: Int { writer?.framesWritten ?? 0 }

    public func write(_ frame: EncodedFrame) throws {
        if writer == nil {
            writer = try WebMWriter(
                path: path, codec: frame.codec, width: frame.width, height: frame.height,
                framesPerSecond: framesPerSecond)
        }
        try writer?.write(frame)
    }

    public func finish() throws { try writer?.finish() }
}

@available(*, unavailable, message: "owns a WebMWriter, which belongs to one thread")
extension RecordingSink: Sendable {}
