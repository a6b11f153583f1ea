import COpenH264
import COpenH264Shims
import ScreenMedia

/// openh264's H.264 decoder (Constrained Baseline to High, 4:2:0), fed Annex B access units: it decodes each at
/// once, without holding frames back.
final class OpenH264DecoderBackend: DecoderBackend {
    let codec = VideoCodec.h264
    private let decoder: UnsafeMutablePointer<ISVCDecoder?>
    private var info = SBufferInfo()
    private var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) = (nil, nil, nil)
    private var hasPicture = false
    private var lastState: DECODING_STATE = dsErrorFree

    init() throws(CodecError) {
        guard let decoder = COpenH264Shims_createDecoder() else {
            throw CodecError(.unsupportedConfiguration, "openh264 cannot open an H.264 decoder")
        }
        self.decoder = decoder
    }

    deinit { COpenH264Shims_destroyDecoder(decoder) }

    func decode(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        hasPicture = false
        guard count <= Int(Int32.max) else {
            lastState = dsInvalidArgument
            return false
        }
        planes = (nil, nil, nil)
        // The three plane pointers as the C array `unsigned char *[3]` the call fills in (a homogeneous tuple).
        lastState = withUnsafeMutablePointer(to: &planes) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { pointers in
                COpenH264Shims_decode(decoder, bytes, Int32(count), pointers, &info)
            }
        }
        guard lastState == dsErrorFree else { return false }
        hasPicture = info.iBufferStatus == 1
        return true
    }

    func nextPicture() throws(CodecError) -> LentPlanes? {
        guard hasPicture else { return nil }
        hasPicture = false
        let buffer = info.UsrData.sSystemBuffer
        guard let y = planes.0, let u = planes.1, let v = planes.2, buffer.iWidth > 0, buffer.iHeight > 0 else {
            throw CodecError(.corruptInput, "openh264 returned a picture without planes")
        }
        return LentPlanes(
            width: Int(buffer.iWidth), height: Int(buffer.iHeight), chroma: .yuv420, planes: (y, u, v),
            strides: (Int(buffer.iStride.0), Int(buffer.iStride.1), Int(buffer.iStride.1)))
    }

    /// openh264 answers with a set of `DECODING_STATE` bits rather than a text.
    func errorDetail() -> String { "openh264 decoding state 0x\(String(lastState.rawValue, radix: 16))" }
}
