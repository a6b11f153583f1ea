public import ScreenMedia

/// A video decoder producing BGRA frames (converted with libyuv): one flow over a ``DecoderBackend`` for the
/// codec's library. Holds the library's context, which is not thread-safe: one decoder belongs to one thread.
public final class FrameDecoder: VideoDecoder {
    public var codec: VideoCodec { backend.codec }
    private let backend: any DecoderBackend
    private var output = DecodedPicture()

    /// A decoder for `codec`: libvpx for VP8 and VP9, libaom for AV1, openh264 for H.264.
    public init(codec: VideoCodec) throws(CodecError) {
        backend = switch codec {
        case .av1: try AV1DecoderBackend()
        case .vp8, .vp9: try VPXDecoderBackend(codec: codec)
        case .h264: try OpenH264DecoderBackend()
        }
    }

    /// Decodes one compressed frame (for AV1, a temporal unit) and lends each resulting picture (BGRA, with the
    /// given timing and metadata) to `body`. The lent frame is reused by the next call. Pictures other than
    /// 8-bit 4:2:0 and 4:4:4 (which screenpub never produces) are an error.
    public func decode(
        _ payload: UnsafeRawBufferPointer, captureTime: MediaTime = .zero,
        wallClock: WallClockTime = WallClockTime(secondsSince1970: 0, nanoseconds: 0),
        metadata: FrameMetadata = .empty, _ body: (VideoFrame) throws -> Void
    ) throws {
        guard let base = payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count > 0 else {
            throw CodecError(.corruptInput, "empty \(codec) frame")
        }
        guard backend.decode(base, count: payload.count) else {
            throw CodecError(.corruptInput, "\(codec) frame could not be decoded: \(backend.errorDetail())")
        }
        while let planes = try backend.nextPicture() {
            try output.lend(planes, captureTime: captureTime, wallClock: wallClock, metadata: metadata, body)
        }
    }
}

@available(*, unavailable, message: "a codec library's context is not thread-safe")
extension FrameDecoder: Sendable {}

/// A decoded 8-bit 4:2:0 or 4:4:4 picture's planes as the codec library lends them, until its next call.
struct LentPlanes {
    var width: Int
    var height: Int
    var chroma: ChromaFormat
    var planes: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>)
    var strides: (Int, Int, Int)
}

/// One codec library as ``FrameDecoder`` drives it: a thin wrapper of its C calls.
protocol DecoderBackend: AnyObject {
    var codec: VideoCodec { get }
    /// Decodes one compressed frame; false when the library refused it (``errorDetail()`` says why).
    func decode(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool
    /// The next picture the last decode produced, or nil when there is none left.
    func nextPicture() throws(CodecError) -> LentPlanes?
    func errorDetail() -> String
}
