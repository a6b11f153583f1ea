import CAOMShims
import CAOM
public import ScreenMedia

/// libaom AV1 encoder in realtime usage with screen-content tools and CBR rate control.
///
/// Set up as Chrome Remote Desktop and libwebrtc drive libaom for a screen: screen tuning with palette mode
/// (flat colours and text), intra block copy off (too slow for realtime), no reordering, cyclic-refresh
/// adaptive quantisation, and the coding tools that cost CPU without helping screen content switched off.
/// Converts BGRA to I420 with libyuv, only the changed rectangles, and codes only the changed 16×16 blocks
/// (libaom's active map). The first frame, a frame at a new size and a frame after ``requestKeyframe()`` are
/// keyframes; every keyframe carries the sequence header. Holds an `aom_codec_ctx_t`, which is not
/// thread-safe: one encoder belongs to one thread.
public final class AV1Encoder: VideoEncoder {
    public let configuration: VideoEncoderConfiguration
    public var codec: VideoCodec { .av1 }

    private let context = UnsafeMutablePointer<aom_codec_ctx_t>.allocate(capacity: 1)
    /// libaom's descriptor of ``EncoderInput/picture``'s planes.
    private let image = UnsafeMutablePointer<aom_image_t>.allocate(capacity: 1)
    private var isOpen = false
    private var input: EncoderInput
    /// The configuration the library was opened with (a refinement changes it for one frame).
    private var config = aom_codec_enc_cfg_t()

    static let defaultSpeed = 10

    public init(configuration: VideoEncoderConfiguration) {
        precondition(configuration.codec == .av1, "AV1Encoder encodes AV1")
        self.configuration = configuration
        input = EncoderInput(usesActiveMap: configuration.usesActiveMap)
        context.initialize(to: aom_codec_ctx_t())
        image.initialize(to: aom_image_t())
    }

    deinit {
        if isOpen { aom_codec_destroy(context) }
        context.deallocate()
        image.deallocate()
    }

    public func requestKeyframe() { input.requestKeyframe() }

    public func encode(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        if input.needsReopening(for: frame) { try open(width: frame.width, height: frame.height) }
        let (keyframe, presentationTime, wholeFrame) = input.prepare(frame)
        try applyActiveMap(wholeFrame: wholeFrame)
        let flags: aom_enc_frame_flags_t = keyframe ? aom_enc_frame_flags_t(AOM_EFLAG_FORCE_KF) : 0
        try encodePicture(frame, presentationTime: presentationTime, flags: flags, output: output)
    }

    public var hasUnrefinedChanges: Bool { input.hasUnrefinedChanges }

    public func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        guard isOpen, !input.needsReopening(for: frame), let presentationTime = input.prepareRefinement(frame) else { return }
        try applyActiveMap(wholeFrame: false)
        var refinement = config
        refinement.rc_max_quantizer = UInt32(VideoEncoderConfiguration.refinementMaxQuantizer)
        guard aom_codec_enc_config_set(context, &refinement) == AOM_CODEC_OK else {
            throw CodecError(.encoderFailed, "libaom refused the refinement's quantizer: \(errorDetail())")
        }
        defer { _ = aom_codec_enc_config_set(context, &config) }
        try encodePicture(frame, presentationTime: presentationTime, flags: 0, output: output)
    }

    private func encodePicture(
        _ frame: VideoFrame, presentationTime: Int64, flags: aom_enc_frame_flags_t, output: (EncodedFrame) throws -> Void
    ) throws {
        let duration = UInt(max(1, (1000 / configuration.framesPerSecond).rounded()))
        guard aom_codec_encode(context, image, aom_codec_pts_t(presentationTime), duration, flags) == AOM_CODEC_OK else {
            throw CodecError(.encoderFailed, "libaom could not encode a frame: \(errorDetail())")
        }
        var iterator: aom_codec_iter_t? = nil
        while let packet = aom_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == AOM_CODEC_CX_FRAME_PKT else { continue }
            let data = packet.pointee.data.frame
            try output(EncodedFrame(
                codec: .av1,
                payload: Self.withoutTemporalDelimiter(UnsafeRawBufferPointer(start: data.buf, count: data.sz)),
                isKeyframe: (data.flags & aom_codec_frame_flags_t(AOM_FRAME_IS_KEY)) != 0,
                width: frame.width, height: frame.height,
                captureTime: frame.captureTime, wallClock: frame.wallClock, metadata: frame.metadata))
        }
    }

    /// The temporal unit without its leading temporal delimiter OBU (`0x12 0x00`): Matroska and ISO-BMFF
    /// store none (libavformat removes them), RTP drops them, and decoders do not need them; without it a
    /// frame's bytes are the same on the wire and in every file.
    static func withoutTemporalDelimiter(_ unit: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard unit.count >= 2, unit[0] == 0x12, unit[1] == 0x00 else { return unit }
        return UnsafeRawBufferPointer(rebasing: unit[2...])
    }

    private func open(width: Int, height: Int) throws(CodecError) {
        if isOpen {
            aom_codec_destroy(context)
            isOpen = false
        }
        try input.reopen(width: width, height: height)
        guard let picture = input.picture,
            aom_img_wrap(image, AOM_IMG_FMT_I420, UInt32(width), UInt32(height), 32, picture.luma) != nil
        else {
            throw CodecError(.unsupportedConfiguration, "libaom cannot take a \(width)×\(height) I420 picture")
        }
        image.pointee.planes = (picture.luma, picture.blueDifference, picture.redDifference)
        image.pointee.stride = (Int32(picture.lumaStride), Int32(picture.chromaStride), Int32(picture.chromaStride))

        let interface = aom_codec_av1_cx()
        guard aom_codec_enc_config_default(interface, &config, UInt32(AOM_USAGE_REALTIME)) == AOM_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libaom has no realtime configuration for AV1")
        }
        config.g_w = UInt32(width)
        config.g_h = UInt32(height)
        config.g_timebase = aom_rational(num: 1, den: 1000)
        config.g_threads = UInt32(max(1, configuration.threads))
        config.g_lag_in_frames = 0
        config.g_error_resilient = 0
        config.g_pass = AOM_RC_ONE_PASS
        config.rc_end_usage = AOM_CBR
        config.rc_target_bitrate = UInt32(max(50, configuration.bitrateKbps))
        config.rc_min_quantizer = 4
        config.rc_max_quantizer = 52
        config.rc_undershoot_pct = 50
        config.rc_overshoot_pct = 50
        config.rc_buf_initial_sz = 500
        config.rc_buf_optimal_sz = 600
        config.rc_buf_sz = 1000
        config.rc_dropframe_thresh = 0
        // As for VP9: keyframes at the start, on size changes and on request only.
        config.kf_mode = AOM_KF_DISABLED
        config.kf_max_dist = 0x7fff_ffff

        guard CAOMShims_encoderInit(context, interface, &config) == AOM_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libaom refused the AV1 configuration: \(errorDetail())")
        }
        isOpen = true

        try control(AOME_SET_CPUUSED, Int32(configuration.speed ?? Self.defaultSpeed))
        try control(AV1E_SET_TUNE_CONTENT, Int32(AOM_CONTENT_SCREEN.rawValue))
        try control(AV1E_SET_ENABLE_PALETTE, 1)
        try control(AV1E_SET_ENABLE_INTRABC, 0)
        try control(AV1E_SET_AQ_MODE, 3)
        try control(AV1E_SET_DELTAQ_MODE, 0)
        try control(AV1E_SET_NOISE_SENSITIVITY, 0)
        try control(AV1E_SET_ENABLE_TPL_MODEL, 0)
        try control(AV1E_SET_ENABLE_ORDER_HINT, 0)
        try control(AV1E_SET_ENABLE_GLOBAL_MOTION, 0)
        try control(AV1E_SET_ENABLE_WARPED_MOTION, 0)
        try control(AV1E_SET_ENABLE_OBMC, 0)
        try control(AV1E_SET_ENABLE_CDEF, 1)
        try control(AV1E_SET_SUPERBLOCK_SIZE, Int32(AOM_SUPERBLOCK_SIZE_64X64.rawValue))
        try control(AV1E_SET_MAX_REFERENCE_FRAMES, 3)
        try control(AOME_SET_MAX_INTRA_BITRATE_PCT, 300)
        // Adapt the entropy costs less often: libwebrtc's realtime settings, less work per frame.
        try control(AV1E_SET_COEFF_COST_UPD_FREQ, 3)
        try control(AV1E_SET_MODE_COST_UPD_FREQ, 3)
        try control(AV1E_SET_MV_COST_UPD_FREQ, 3)
        try control(AV1E_SET_ROW_MT, configuration.threads > 1 ? 1 : 0)
        try control(AV1E_SET_TILE_COLUMNS, configuration.threads > 1 ? 1 : 0)
        // What libyuv produced: BT.601, studio range (as the VP9 encoder says).
        try control(AV1E_SET_COLOR_PRIMARIES, Int32(AOM_CICP_CP_BT_601.rawValue))
        try control(AV1E_SET_TRANSFER_CHARACTERISTICS, Int32(AOM_CICP_TC_BT_601.rawValue))
        try control(AV1E_SET_MATRIX_COEFFICIENTS, Int32(AOM_CICP_MC_BT_601.rawValue))
        try control(AV1E_SET_COLOR_RANGE, Int32(AOM_CR_STUDIO_RANGE.rawValue))
    }

    /// Restricts encoding to the changed blocks, or lifts the restriction for keyframes and whole-frame changes.
    private func applyActiveMap(wholeFrame: Bool) throws(CodecError) {
        guard let rows = input.activeMap?.rows, let columns = input.activeMap?.columns else { return }
        var map = aom_active_map_t(active_map: nil, rows: UInt32(rows), cols: UInt32(columns))
        let status: aom_codec_err_t
        if wholeFrame {
            status = CAOMShims_controlActiveMap(context, &map)
        } else {
            status = input.activeMapBytes { bytes in
                map.active_map = bytes
                return CAOMShims_controlActiveMap(context, &map)
            } ?? AOM_CODEC_OK
        }
        guard status == AOM_CODEC_OK else {
            throw CodecError(.encoderFailed, "libaom refused the active map: \(errorDetail())")
        }
    }

    private func control(_ id: aome_enc_control_id, _ value: Int32) throws(CodecError) {
        guard CAOMShims_controlInt(context, Int32(id.rawValue), value) == AOM_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libaom control \(id.rawValue) = \(value) failed: \(errorDetail())")
        }
    }

    private func errorDetail() -> String {
        let message = aom_codec_error(context).map { String(cString: $0) } ?? "unknown error"
        let detail = aom_codec_error_detail(context).map { String(cString: $0) }
        return detail.map { "\(message) (\($0))" } ?? message
    }
}

@available(*, unavailable, message: "a libaom context is not thread-safe")
extension AV1Encoder: Sendable {}

/// libaom AV1 decoder producing BGRA frames (converted with libyuv). One decoder belongs to one thread.
public final class AV1Decoder: VideoDecoder {
    public var codec: VideoCodec { .av1 }
    private let context = UnsafeMutablePointer<aom_codec_ctx_t>.allocate(capacity: 1)
    private var output = DecodedPicture()

    public init() throws(CodecError) {
        context.initialize(to: aom_codec_ctx_t())
        guard CAOMShims_decoderInit(context, aom_codec_av1_dx(), 1) == AOM_CODEC_OK else {
            context.deallocate()
            throw CodecError(.unsupportedConfiguration, "libaom cannot open an AV1 decoder")
        }
    }

    deinit {
        aom_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one temporal unit and lends each resulting picture (BGRA, with the given timing and metadata)
    /// to `body`. The lent frame is reused by the next call. Pictures other than 8-bit 4:2:0 (which screenpub
    /// never produces) are an error.
    public func decode(
        _ payload: UnsafeRawBufferPointer, captureTime: MediaTime = .zero,
        wallClock: WallClockTime = WallClockTime(secondsSince1970: 0, nanoseconds: 0),
        metadata: FrameMetadata = .empty, _ body: (VideoFrame) throws -> Void
    ) throws {
        guard let base = payload.baseAddress?.assumingMemoryBound(to: UInt8.self), payload.count > 0 else {
            throw CodecError(.corruptInput, "empty AV1 frame")
        }
        guard aom_codec_decode(context, base, payload.count, nil) == AOM_CODEC_OK else {
            let message = aom_codec_error(context).map { String(cString: $0) } ?? "unknown error"
            throw CodecError(.corruptInput, "AV1 frame could not be decoded: \(message)")
        }
        var iterator: aom_codec_iter_t? = nil
        while let image = aom_codec_get_frame(context, &iterator) {
            let img = image.pointee
            guard img.fmt == AOM_IMG_FMT_I420, img.bit_depth == 8 else {
                throw CodecError(.unsupportedConfiguration, "AV1 pictures in format \(img.fmt.rawValue) at \(img.bit_depth) bits are not supported; screenpub decodes 8-bit 4:2:0")
            }
            guard let y = img.planes.0, let u = img.planes.1, let v = img.planes.2 else { continue }
            try output.lend(
                width: Int(img.d_w), height: Int(img.d_h), planes: (y, u, v),
                strides: (Int(img.stride.0), Int(img.stride.1), Int(img.stride.2)),
                captureTime: captureTime, wallClock: wallClock, metadata: metadata, body)
        }
    }
}

@available(*, unavailable, message: "a libaom context is not thread-safe")
extension AV1Decoder: Sendable {}
