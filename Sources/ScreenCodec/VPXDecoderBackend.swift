import CVPXShims
import CVPX
import ScreenMedia

/// libvpx's VP8 or VP9 decoder.
final class VPXDecoderBackend: DecoderBackend {
    let codec: VideoCodec
    private let context = LibraryHandle(vpx_codec_ctx_t()) { _ = vpx_codec_destroy($0) }
    private var pictures: vpx_codec_iter_t? = nil

    init(codec: VideoCodec) throws(CodecError) {
        guard codec != .av1 else { throw CodecError(.unsupportedConfiguration, "libvpx does not decode AV1") }
        self.codec = codec
        let interface = codec == .vp9 ? vpx_codec_vp9_dx() : vpx_codec_vp8_dx()
        guard CVPXShims_vpxDecoderInit(context.pointer, interface, 1) == VPX_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libvpx cannot open a \(codec) decoder")
        }
        context.markOpen()
    }

    func decode(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        pictures = nil
        return vpx_codec_decode(context.pointer, bytes, UInt32(count), nil, 0) == VPX_CODEC_OK
    }

    func nextPicture() throws(CodecError) -> LentPlanes? {
        guard let image = vpx_codec_get_frame(context.pointer, &pictures)?.pointee else { return nil }
        let chroma: ChromaFormat? = switch image.fmt {
        case VPX_IMG_FMT_I420: .yuv420
        case VPX_IMG_FMT_I444: .yuv444
        default: nil
        }
        guard let chroma, let y = image.planes.0, let u = image.planes.1, let v = image.planes.2 else {
            throw CodecError(.unsupportedConfiguration, "\(codec) pictures in format \(image.fmt.rawValue) (not 8-bit 4:2:0 or 4:4:4) are not supported")
        }
        return LentPlanes(
            width: Int(image.d_w), height: Int(image.d_h), chroma: chroma, planes: (y, u, v),
            strides: (Int(image.stride.0), Int(image.stride.1), Int(image.stride.2)))
    }

    func errorDetail() -> String { libraryErrorText(vpx_codec_error(context.pointer), vpx_codec_error_detail(context.pointer)) }
}
