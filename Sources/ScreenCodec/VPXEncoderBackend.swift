import CVPXShims
import CVPX
import ScreenMedia

/// libvpx VP9 (screen-content tuning) or VP8 at the realtime deadline.
final class VPXEncoderBackend: EncoderBackend {
    let codec: VideoCodec
    var library: String { "libvpx" }
    /// The next frame's reference and refresh flags (its layer, in the flat structure).
    private var layerFlags: vpx_enc_frame_flags_t = 0
    private let context = LibraryHandle(vpx_codec_ctx_t()) { _ = vpx_codec_destroy($0) }
    /// libvpx's descriptor of the lent picture's planes.
    private let image = LibraryHandle(vpx_image_t())
    var config = vpx_codec_enc_cfg_t()
    private var packets: vpx_codec_iter_t? = nil

    static let defaultVP9Speed = 8
    static let defaultVP8Speed = 12

    init(codec: VideoCodec) {
        precondition(codec != .av1, "libvpx encodes VP8 and VP9")
        self.codec = codec
    }

    func open(picture: YUVPicture, rate: RateControl, configuration: VideoEncoderConfiguration) throws(CodecError) {
        context.close()
        if let refusal = VideoEncoderConfiguration.chromaRefusal(codec: codec, chroma: picture.chroma) {
            throw CodecError(.unsupportedConfiguration, refusal)
        }
        let format = picture.chroma == .yuv444 ? VPX_IMG_FMT_I444 : VPX_IMG_FMT_I420
        let described = vpx_img_wrap(image.pointer, format, UInt32(picture.width), UInt32(picture.height), 32, picture.luma)
        guard described != nil else {
            throw CodecError(.unsupportedConfiguration, "libvpx cannot take a \(picture.width)×\(picture.height) \(picture.chroma.displayName) picture")
        }
        image.pointer.pointee.planes = (picture.luma, picture.blueDifference, picture.redDifference, nil)
        image.pointer.pointee.stride = (Int32(picture.lumaStride), Int32(picture.chromaStride), Int32(picture.chromaStride), 0)
        let interface = codec == .vp9 ? vpx_codec_vp9_cx() : vpx_codec_vp8_cx()
        guard vpx_codec_enc_config_default(interface, &config, 0) == VPX_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libvpx has no default configuration for \(codec)")
        }
        config.setRealtime(width: picture.width, height: picture.height, threads: configuration.threads, rate: rate)
        // VP9 profile 1 is 8-bit 4:2:2, 4:4:0 or 4:4:4; profile 0 is 8-bit 4:2:0.
        config.g_profile = picture.chroma == .yuv444 ? 1 : 0
        (config.g_timebase, config.g_pass, config.rc_end_usage) = (vpx_rational(num: 1, den: 1000), VPX_RC_ONE_PASS, VPX_CBR)
        config.kf_mode = VPX_KF_DISABLED
        // With layers a decoder may not see every frame: no frame may lean on the one decoded before it (its motion
        // vectors, its probability updates), as libwebrtc sets VP9 up for temporal layers.
        if configuration.temporalLayers > 1 { config.g_error_resilient = UInt32(VPX_ERROR_RESILIENT_DEFAULT) }
        try require(CVPXShims_vpxEncoderInit(context.pointer, interface, &config) == VPX_CODEC_OK, "refused the \(codec) configuration")
        context.markOpen()

        for (id, value) in controls(configuration) {
            try require(CVPXShims_vpxControlInt(context.pointer, Int32(id.rawValue), value) == VPX_CODEC_OK, "control \(id.rawValue) = \(value) failed")
        }
    }

    func speed(faster: Bool, configured: Int?) -> Int? {
        let range = VideoEncoderConfiguration.speedRange(for: codec)
        let normal = configured ?? (codec == .vp9 ? Self.defaultVP9Speed : Self.defaultVP8Speed)
        return normal == range.upperBound ? nil : faster ? range.upperBound : normal
    }

    /// VP8's speeds are given negative: fixed, not a share of the frame interval.
    func setSpeed(_ speed: Int) -> Bool {
        CVPXShims_vpxControlInt(context.pointer, Int32(VP8E_SET_CPUUSED.rawValue), codec == .vp8 ? -Int32(speed) : Int32(speed)) == VPX_CODEC_OK
    }

    /// VP8 has no such cap: its frames stay within the rate control's buffer.
    func setMaximumInterFrame(percentOfAverage: Int) -> Bool {
        guard codec == .vp9 else { return true }
        return CVPXShims_vpxControlInt(context.pointer, Int32(VP9E_SET_MAX_INTER_BITRATE_PCT.rawValue), Int32(percentOfAverage)) == VPX_CODEC_OK
    }

    func lastQuantizer() -> Int? {
        let quantizer = CVPXShims_vpxLastQuantizer(context.pointer)
        return quantizer >= 0 ? Int(quantizer) : nil
    }

    /// Every frame predicts from LAST (slot 0, the newest layer-0 frame: also what the active map's inactive blocks
    /// copy from); only layer-0 frames refresh it.
    /// LAST only: pointed elsewhere, libvpx coded blocks beside an active map that its decoder refused
    /// (``TemporalLayers``), so only a change in layer 0 is refined in parts.
    var predictsFromAnySlot: Bool { false }

    func setFrameLayer(_ frame: TemporalLayers.Frame) -> Bool {
        let noOtherReference = UInt(VP8_EFLAG_NO_REF_GF) | UInt(VP8_EFLAG_NO_REF_ARF) | UInt(VP8_EFLAG_NO_UPD_GF) | UInt(VP8_EFLAG_NO_UPD_ARF)
        let keptNowhere = noOtherReference | UInt(VP8_EFLAG_NO_UPD_LAST) | UInt(VP8_EFLAG_NO_UPD_ENTROPY)
        layerFlags = vpx_enc_frame_flags_t(frame.isReference ? noOtherReference : keptNowhere)
        return true
    }

    private func controls(_ configuration: VideoEncoderConfiguration) -> [(vp8e_enc_control_id, Int32)] {
        guard codec == .vp9 else {
            return [
                // Negative: a fixed speed, not a share of the frame interval (which would make low rates slower).
                (VP8E_SET_CPUUSED, -Int32(configuration.speed ?? Self.defaultVP8Speed)),
                (VP8E_SET_SCREEN_CONTENT_MODE, 1), (VP8E_SET_NOISE_SENSITIVITY, 0), (VP8E_SET_STATIC_THRESHOLD, 1),
            ]
        }
        return [
            (VP8E_SET_CPUUSED, Int32(configuration.speed ?? Self.defaultVP9Speed)),
            (VP9E_SET_TUNE_CONTENT, Int32(VP9E_CONTENT_SCREEN.rawValue)),
            (VP9E_SET_AQ_MODE, 3),  // cyclic refresh: steady quality for realtime
            (VP9E_SET_NOISE_SENSITIVITY, 0), (VP9E_SET_ROW_MT, 1),
            (VP9E_SET_TILE_COLUMNS, configuration.threads > 1 ? 1 : 0),
            // Say what libyuv produced (BT.601, studio range): players otherwise guess, and browsers guess BT.709,
            // which shifts saturated colours by up to ~25 levels.
            (VP9E_SET_COLOR_SPACE, Int32(VPX_CS_BT_601.rawValue)), (VP9E_SET_COLOR_RANGE, Int32(VPX_CR_STUDIO_RANGE.rawValue)),
        ]
    }

    func applyConfiguration() -> Bool { vpx_codec_enc_config_set(context.pointer, &config) == VPX_CODEC_OK }

    func setActiveMap(_ blocks: ActiveBlocks) -> Bool {
        CVPXShims_vpxSetActiveMap(context.pointer, blocks.map, UInt32(blocks.rows), UInt32(blocks.columns)) == VPX_CODEC_OK
    }

    func encodePicture(presentationTime: Int64, duration: Int, keyframe: Bool) -> Bool {
        packets = nil
        let flags = keyframe ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : layerFlags
        layerFlags = 0
        return vpx_codec_encode(context.pointer, image.pointer, vpx_codec_pts_t(presentationTime), UInt(duration), flags, UInt(VPX_DL_REALTIME)) == VPX_CODEC_OK
    }

    func nextPacket() -> CodedPacket? {
        while let packet = vpx_codec_get_cx_data(context.pointer, &packets)?.pointee {
            guard packet.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let frame = packet.data.frame
            return CodedPacket(
                payload: UnsafeRawBufferPointer(start: frame.buf, count: frame.sz),
                isKeyframe: (frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY)) != 0)
        }
        return nil
    }

    func errorDetail() -> String { libraryErrorText(vpx_codec_error(context.pointer), vpx_codec_error_detail(context.pointer)) }
}

extension vpx_codec_enc_cfg_t: LibraryEncoderConfiguration {}
