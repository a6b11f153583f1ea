import CAOMShims
import CAOM
import ScreenMedia

/// libaom's AV1 decoder.
final class AV1DecoderBackend: DecoderBackend {
    var codec: VideoCodec { .av1 }
    private let context = LibraryHandle(aom_codec_ctx_t()) { _ = aom_codec_destroy($0) }
    private var pictures: aom_codec_iter_t? = nil

    init() throws(CodecError) {
        guard CAOMShims_decoderInit(context.pointer, aom_codec_av1_dx(), 1) == AOM_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libaom cannot open an AV1 decoder")
        }
        context.markOpen()
    }

    func decode(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        pictures = nil
        return aom_codec_decode(context.pointer, bytes, count, nil) == AOM_CODEC_OK
    }

    func nextPicture() throws(CodecError) -> LentPlanes? {
        guard let image = aom_codec_get_frame(context.pointer, &pictures)?.pointee else { return nil }
        let chroma: ChromaFormat? = switch image.fmt {
        case AOM_IMG_FMT_I420: .yuv420
        case AOM_IMG_FMT_I444: .yuv444
        default: nil
        }
        guard let chroma, image.bit_depth == 8, let y = image.planes.0, let u = image.planes.1, let v = image.planes.2 else {
            throw CodecError(.unsupportedConfiguration, "AV1 pictures in format \(image.fmt.rawValue) at \(image.bit_depth) bits are not supported; screenpub decodes 8-bit 4:2:0 and 4:4:4")
        }
        return LentPlanes(
            width: Int(image.d_w), height: Int(image.d_h), chroma: chroma, planes: (y, u, v),
            strides: (Int(image.stride.0), Int(image.stride.1), Int(image.stride.2)))
    }

    func errorDetail() -> String { libraryErrorText(aom_codec_error(context.pointer), aom_codec_error_detail(context.pointer)) }
}
