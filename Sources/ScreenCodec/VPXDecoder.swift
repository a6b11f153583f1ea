import CVPXShims
import CVPX
import CYUV
public import ScreenMedia

/// libvpx VP8/VP9 decoder producing BGRA frames (converted with libyuv). One decoder belongs to one thread.
public final class VPXDecoder: VideoDecoder {
    public let codec: VideoCodec
    private let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    private var output: VideoFrame?

    public init(codec: VideoCodec) throws(CodecError) {
        self.codec = codec
        context.initialize(to: vpx_codec_ctx_t())
        let interface = codec == .vp9 ? vpx_codec_vp9_dx() : vpx_codec_vp8_dx()
        guard CVPXShims_vpxDecoderInit(context, interface, 1) == VPX_CODEC_OK else {
            context.deallocate()
            throw CodecError(.unsupportedConfiguration, "libvpx cannot open a \(codec) decoder")
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one compressed frame and lends each resulting picture (BGRA, with the given timing and metadata)
    /// to `body`. The lent frame is reused by the next call.
    public func decode(
        _ payload: UnsafeRawBufferPointer, captureTime: MediaTime = .zero,
        wallClock: WallClockTime = WallClockTime(secondsSince1970: 0, nanoseconds: 0),
        metadata: FrameMetadata = .empty, _ body: (VideoFrame) throws -> Void
    ) throws {
        guard let base = payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count > 0 else {
            throw CodecError(.corruptInput, "empty \(codec) frame")
        }
        guard vpx_codec_decode(context, base, UInt32(payload.count), nil, 0) == VPX_CODEC_OK else {
            let message = vpx_codec_error(context).map { String(cString: $0) } ?? "unknown error"
            throw CodecError(.corruptInput, "\(codec) frame could not be decoded: \(message)")
        }
        var iterator: vpx_codec_iter_t? = nil
        while let image = vpx_codec_get_frame(context, &iterator) {
            let width = Int(image.pointee.d_w), height = Int(image.pointee.d_h)
            let frame: VideoFrame
            if let output {
                output.resize(width: width, height: height)
                frame = output
            } else {
                frame = VideoFrame(width: width, height: height)
                output = frame
            }
            let img = image.pointee
            frame.withUnsafeMutableBytes { pixels in
                _ = I420ToARGB(
                    img.planes.0, img.stride.0, img.planes.1, img.stride.1, img.planes.2, img.stride.2,
                    pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(frame.bytesPerRow),
                    Int32(width), Int32(height))
            }
            frame.captureTime = captureTime
            frame.wallClock = wallClock
            frame.metadata = metadata
            frame.markAllChanged()
            try body(frame)
        }
    }
}

@available(*, unavailable, message: "a libvpx context is not thread-safe")
extension VPXDecoder: Sendable {}
