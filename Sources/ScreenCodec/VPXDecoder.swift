import CVPXShims
import CVPX
public import ScreenMedia

/// libvpx VP8/VP9 decoder producing BGRA frames (converted with libyuv). One decoder belongs to one thread.
public final class VPXDecoder: VideoDecoder {
    public let codec: VideoCodec
    private let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    private var output = DecodedPicture()

    public init(codec: VideoCodec) throws(CodecError) {
        guard codec != .av1 else { throw CodecError(.unsupportedConfiguration, "libvpx does not decode AV1") }
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
            let img = image.pointee
            guard img.fmt == VPX_IMG_FMT_I420 else {
                throw CodecError(.unsupportedConfiguration, "\(codec) pictures in format \(img.fmt.rawValue) (not 8-bit 4:2:0) are not supported")
            }
            guard let y = img.planes.0, let u = img.planes.1, let v = img.planes.2 else { continue }
            try output.lend(
                width: Int(img.d_w), height: Int(img.d_h), planes: (y, u, v),
                strides: (Int(img.stride.0), Int(img.stride.1), Int(img.stride.2)),
                captureTime: captureTime, wallClock: wallClock, metadata: metadata, body)
        }
    }
}

@available(*, unavailable, message: "a libvpx context is not thread-safe")
extension VPXDecoder: Sendable {}
