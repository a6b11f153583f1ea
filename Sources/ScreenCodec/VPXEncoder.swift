import CVPXShims
import CVPX
public import ScreenMedia

/// libvpx VP9 (screen-content tuning) or VP8 encoder at the realtime deadline with CBR rate control.
///
/// Converts BGRA to I420 with libyuv, only the changed rectangles of each frame. The first frame, a frame at
/// a new size and a frame after ``requestKeyframe()`` are keyframes. Holds a `vpx_codec_ctx_t`, which is
/// not thread-safe: one encoder belongs to one thread.
public final class VPXEncoder: VideoEncoder {
    public let configuration: VideoEncoderConfiguration
    public var codec: VideoCodec { configuration.codec }

    private let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    /// libvpx's descriptor of ``EncoderInput/picture``'s planes.
    private let image = UnsafeMutablePointer<vpx_image_t>.allocate(capacity: 1)
    private var isOpen = false
    private var input: EncoderInput
    /// The configuration the library was opened with (a refinement changes it for one frame).
    private var config = vpx_codec_enc_cfg_t()

    static let defaultVP9Speed = 8
    static let defaultVP8Speed = 12

    public init(configuration: VideoEncoderConfiguration) {
        precondition(configuration.codec != .av1, "VPXEncoder encodes VP8 and VP9")
        self.configuration = configuration
        input = EncoderInput(usesActiveMap: configuration.usesActiveMap)
        context.initialize(to: vpx_codec_ctx_t())
        image.initialize(to: vpx_image_t())
    }

    deinit {
        if isOpen { vpx_codec_destroy(context) }
        context.deallocate()
        image.deallocate()
    }

    public func requestKeyframe() { input.requestKeyframe() }

    public func encode(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        if input.needsReopening(for: frame) { try open(width: frame.width, height: frame.height) }
        let (keyframe, presentationTime, wholeFrame) = input.prepare(frame)
        try applyActiveMap(wholeFrame: wholeFrame)
        let flags: vpx_enc_frame_flags_t = keyframe ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
        try encodePicture(frame, presentationTime: presentationTime, flags: flags, output: output)
    }

    public var hasUnrefinedChanges: Bool { input.hasUnrefinedChanges }

    public func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        guard isOpen, !input.needsReopening(for: frame), let presentationTime = input.prepareRefinement(frame) else { return }
        try applyActiveMap(wholeFrame: false)
        var refinement = config
        refinement.rc_max_quantizer = UInt32(VideoEncoderConfiguration.refinementMaxQuantizer)
        guard vpx_codec_enc_config_set(context, &refinement) == VPX_CODEC_OK else {
            throw CodecError(.encoderFailed, "libvpx refused the refinement's quantizer: \(errorDetail())")
        }
        defer { _ = vpx_codec_enc_config_set(context, &config) }
        try encodePicture(frame, presentationTime: presentationTime, flags: 0, output: output)
    }

    private func encodePicture(
        _ frame: VideoFrame, presentationTime: Int64, flags: vpx_enc_frame_flags_t, output: (EncodedFrame) throws -> Void
    ) throws {
        let duration = UInt(max(1, (1000 / configuration.framesPerSecond).rounded()))
        let status = vpx_codec_encode(
            context, image, vpx_codec_pts_t(presentationTime), duration, flags, UInt(VPX_DL_REALTIME))
        guard status == VPX_CODEC_OK else {
            throw CodecError(.encoderFailed, "libvpx could not encode a frame: \(errorDetail())")
        }
        var iterator: vpx_codec_iter_t? = nil
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let data = packet.pointee.data.frame
            try output(EncodedFrame(
                codec: codec,
                payload: UnsafeRawBufferPointer(start: data.buf, count: data.sz),
                isKeyframe: (data.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY)) != 0,
                width: frame.width, height: frame.height,
                captureTime: frame.captureTime, wallClock: frame.wallClock, metadata: frame.metadata))
        }
    }

    private func open(width: Int, height: Int) throws(CodecError) {
        if isOpen {
            vpx_codec_destroy(context)
            isOpen = false
        }
        try input.reopen(width: width, height: height)
        guard let picture = input.picture,
            vpx_img_wrap(image, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 32, picture.luma) != nil
        else {
            throw CodecError(.unsupportedConfiguration, "libvpx cannot take a \(width)×\(height) I420 picture")
        }
        image.pointee.planes = (picture.luma, picture.blueDifference, picture.redDifference, nil)
        image.pointee.stride = (Int32(picture.lumaStride), Int32(picture.chromaStride), Int32(picture.chromaStride), 0)

        let interface = codec == .vp9 ? vpx_codec_vp9_cx() : vpx_codec_vp8_cx()
        guard vpx_codec_enc_config_default(interface, &config, 0) == VPX_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libvpx has no default configuration for \(codec)")
        }
        config.g_w = UInt32(width)
        config.g_h = UInt32(height)
        config.g_timebase = vpx_rational(num: 1, den: 1000)
        config.g_threads = UInt32(max(1, configuration.threads))
        config.g_lag_in_frames = 0
        config.g_error_resilient = 0
        config.g_pass = VPX_RC_ONE_PASS
        config.rc_end_usage = VPX_CBR
        config.rc_target_bitrate = UInt32(max(50, configuration.bitrateKbps))
        config.rc_min_quantizer = 4
        config.rc_max_quantizer = 52
        config.rc_undershoot_pct = 50
        config.rc_overshoot_pct = 50
        config.rc_buf_initial_sz = 500
        config.rc_buf_optimal_sz = 600
        config.rc_buf_sz = 1000
        config.rc_dropframe_thresh = 0
        // Keyframes come at the start, on size changes and on request; an idle screen sends no frames, so a
        // frame-count interval would mean nothing.
        config.kf_mode = VPX_KF_DISABLED
        config.kf_max_dist = 0x7fff_ffff

        guard CVPXShims_vpxEncoderInit(context, interface, &config) == VPX_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libvpx refused the \(codec) configuration: \(errorDetail())")
        }
        isOpen = true

        switch codec {
        case .vp9:
            try control(VP8E_SET_CPUUSED, Int32(configuration.speed ?? Self.defaultVP9Speed))
            try control(VP9E_SET_TUNE_CONTENT, Int32(VP9E_CONTENT_SCREEN.rawValue))
            try control(VP9E_SET_AQ_MODE, 3)  // cyclic refresh: steady quality for realtime
            try control(VP9E_SET_NOISE_SENSITIVITY, 0)
            try control(VP9E_SET_ROW_MT, 1)
            try control(VP9E_SET_TILE_COLUMNS, configuration.threads > 1 ? 1 : 0)
            // Say what libyuv produced (BT.601, studio range): players otherwise guess, and browsers guess BT.709,
            // which shifts saturated colours by up to ~25 levels.
            try control(VP9E_SET_COLOR_SPACE, Int32(VPX_CS_BT_601.rawValue))
            try control(VP9E_SET_COLOR_RANGE, Int32(VPX_CR_STUDIO_RANGE.rawValue))
        case .vp8:
            // Negative: a fixed speed, not a share of the frame interval (which would make low rates slower).
            try control(VP8E_SET_CPUUSED, -Int32(configuration.speed ?? Self.defaultVP8Speed))
            try control(VP8E_SET_SCREEN_CONTENT_MODE, 1)
            try control(VP8E_SET_NOISE_SENSITIVITY, 0)
            try control(VP8E_SET_STATIC_THRESHOLD, 1)
        case .av1:
            break
        }
    }

    /// Restricts encoding to the changed blocks, or lifts the restriction for keyframes and whole-frame changes.
    private func applyActiveMap(wholeFrame: Bool) throws(CodecError) {
        guard let rows = input.activeMap?.rows, let columns = input.activeMap?.columns else { return }
        var map = vpx_active_map_t(active_map: nil, rows: UInt32(rows), cols: UInt32(columns))
        let status: vpx_codec_err_t
        if wholeFrame {
            status = CVPXShims_vpxControlActiveMap(context, &map)
        } else {
            status = input.activeMapBytes { bytes in
                map.active_map = bytes
                return CVPXShims_vpxControlActiveMap(context, &map)
            } ?? VPX_CODEC_OK
        }
        guard status == VPX_CODEC_OK else {
            throw CodecError(.encoderFailed, "libvpx refused the active map: \(errorDetail())")
        }
    }

    private func control(_ id: vp8e_enc_control_id, _ value: Int32) throws(CodecError) {
        try control(Int32(id.rawValue), value)
    }

    private func control(_ id: vp9e_tune_content, _ value: Int32) throws(CodecError) {
        try control(Int32(id.rawValue), value)
    }

    private func control(_ id: Int32, _ value: Int32) throws(CodecError) {
        guard CVPXShims_vpxControlInt(context, id, value) == VPX_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libvpx control \(id) = \(value) failed: \(errorDetail())")
        }
    }

    private func errorDetail() -> String {
        let message = vpx_codec_error(context).map { String(cString: $0) } ?? "unknown error"
        let detail = vpx_codec_error_detail(context).map { String(cString: $0) }
        return detail.map { "\(message) (\($0))" } ?? message
    }
}

@available(*, unavailable, message: "a libvpx context is not thread-safe")
extension VPXEncoder: Sendable {}
