import CAOMShims
import CAOM
import ScreenMedia

/// libaom AV1 in realtime usage with screen-content tools.
///
/// Set up as Chrome Remote Desktop and libwebrtc drive libaom for a screen: screen tuning with palette mode
/// (flat colours and text), intra block copy off (too slow for realtime), no reordering, cyclic-refresh
/// adaptive quantisation, and the coding tools that cost CPU without helping screen content switched off.
/// Every keyframe carries the sequence header.
final class AV1EncoderBackend: EncoderBackend {
    var codec: VideoCodec { .av1 }
    var library: String { "libaom" }
    private let context = LibraryHandle(aom_codec_ctx_t()) { _ = aom_codec_destroy($0) }
    /// libaom's descriptor of the lent picture's planes.
    private let image = LibraryHandle(aom_image_t())
    var config = aom_codec_enc_cfg_t()
    private var packets: aom_codec_iter_t? = nil
    /// The slots the last coded frame was kept in, and the slot the next one predicts from
    /// (``setFrameLayer(_:)``): when the last frame was kept but not where the next reads, the next is coded
    /// error-resilient (``encodePicture(presentationTime:duration:keyframe:)``).
    private var lastRefreshMask: UInt8 = 0xFF
    private var nextFrame = TemporalLayers.Frame.keyframe

    static let defaultSpeed = 10

    func open(picture: YUVPicture, rate: RateControl, configuration: VideoEncoderConfiguration) throws(CodecError) {
        context.close()
        let format = picture.chroma == .yuv444 ? AOM_IMG_FMT_I444 : AOM_IMG_FMT_I420
        guard aom_img_wrap(image.pointer, format, UInt32(picture.width), UInt32(picture.height), 32, picture.luma) != nil else {
            throw CodecError(.unsupportedConfiguration, "libaom cannot take a \(picture.width)×\(picture.height) \(picture.chroma.displayName) picture")
        }
        image.pointer.pointee.planes = (picture.luma, picture.blueDifference, picture.redDifference)
        image.pointer.pointee.stride = (Int32(picture.lumaStride), Int32(picture.chromaStride), Int32(picture.chromaStride))
        let interface = aom_codec_av1_cx()
        guard aom_codec_enc_config_default(interface, &config, UInt32(AOM_USAGE_REALTIME)) == AOM_CODEC_OK else {
            throw CodecError(.unsupportedConfiguration, "libaom has no realtime configuration for AV1")
        }
        config.setRealtime(width: picture.width, height: picture.height, threads: configuration.threads, rate: rate)
        // Profile 1 (High) is 8- and 10-bit 4:4:4; 0 (Main) is 4:2:0.
        config.g_profile = picture.chroma == .yuv444 ? 1 : 0
        (config.g_timebase, config.g_pass, config.rc_end_usage) = (aom_rational(num: 1, den: 1000), AOM_RC_ONE_PASS, AOM_CBR)
        config.kf_mode = AOM_KF_DISABLED
        try require(CAOMShims_encoderInit(context.pointer, interface, &config) == AOM_CODEC_OK, "refused the AV1 configuration")
        context.markOpen()

        let threaded: Int32 = configuration.threads > 1 ? 1 : 0
        let controls: [(aome_enc_control_id, Int32)] = [
            (AOME_SET_CPUUSED, Int32(configuration.speed ?? Self.defaultSpeed)),
            (AV1E_SET_TUNE_CONTENT, Int32(AOM_CONTENT_SCREEN.rawValue)),
            (AV1E_SET_ENABLE_PALETTE, 1), (AV1E_SET_ENABLE_INTRABC, 0),
            (AV1E_SET_AQ_MODE, 3), (AV1E_SET_DELTAQ_MODE, 0), (AV1E_SET_NOISE_SENSITIVITY, 0),
            (AV1E_SET_ENABLE_TPL_MODEL, 0), (AV1E_SET_ENABLE_ORDER_HINT, 0), (AV1E_SET_ENABLE_GLOBAL_MOTION, 0),
            (AV1E_SET_ENABLE_WARPED_MOTION, 0), (AV1E_SET_ENABLE_OBMC, 0), (AV1E_SET_ENABLE_CDEF, 1),
            (AV1E_SET_SUPERBLOCK_SIZE, Int32(AOM_SUPERBLOCK_SIZE_64X64.rawValue)),
            (AV1E_SET_MAX_REFERENCE_FRAMES, 3), (AOME_SET_MAX_INTRA_BITRATE_PCT, 300),
            // Adapt the entropy costs less often: libwebrtc's realtime settings, less work per frame.
            (AV1E_SET_COEFF_COST_UPD_FREQ, 3), (AV1E_SET_MODE_COST_UPD_FREQ, 3), (AV1E_SET_MV_COST_UPD_FREQ, 3),
            (AV1E_SET_ROW_MT, threaded), (AV1E_SET_TILE_COLUMNS, threaded),
            // What libyuv produced: BT.601, studio range (as the VP9 encoder says).
            (AV1E_SET_COLOR_PRIMARIES, Int32(AOM_CICP_CP_BT_601.rawValue)),
            (AV1E_SET_TRANSFER_CHARACTERISTICS, Int32(AOM_CICP_TC_BT_601.rawValue)),
            (AV1E_SET_MATRIX_COEFFICIENTS, Int32(AOM_CICP_MC_BT_601.rawValue)),
            (AV1E_SET_COLOR_RANGE, Int32(AOM_CR_STUDIO_RANGE.rawValue)),
        ]
        for (id, value) in controls {
            try require(CAOMShims_controlInt(context.pointer, Int32(id.rawValue), value) == AOM_CODEC_OK, "control \(id.rawValue) = \(value) failed")
        }
    }

    func applyConfiguration() -> Bool { aom_codec_enc_config_set(context.pointer, &config) == AOM_CODEC_OK }

    /// The default is already libaom's fastest realtime speed: only a slower configured one goes up.
    func speed(faster: Bool, configured: Int?) -> Int? {
        let normal = configured ?? Self.defaultSpeed
        return normal == Self.defaultSpeed ? nil : faster ? Self.defaultSpeed : normal
    }

    func setSpeed(_ speed: Int) -> Bool { CAOMShims_controlInt(context.pointer, Int32(AOME_SET_CPUUSED.rawValue), Int32(speed)) == AOM_CODEC_OK }

    func setMaximumInterFrame(percentOfAverage: Int) -> Bool {
        CAOMShims_controlInt(context.pointer, Int32(AV1E_SET_MAX_INTER_BITRATE_PCT.rawValue), Int32(percentOfAverage)) == AOM_CODEC_OK
    }

    func lastQuantizer() -> Int? {
        let quantizer = CAOMShims_lastQuantizer(context.pointer)
        return quantizer >= 0 ? Int(quantizer) : nil
    }

    /// Any slot: a part of a refinement above layer 0 reads its layer's.
    var predictsFromAnySlot: Bool { true }

    func setFrameLayer(_ frame: TemporalLayers.Frame) -> Bool {
        nextFrame = frame
        return CAOMShims_setFrameReferences(context.pointer, UInt32(frame.refreshMask), Int32(frame.readsSlot)) == AOM_CODEC_OK
    }

    func setActiveMap(_ blocks: ActiveBlocks) -> Bool {
        CAOMShims_setActiveMap(context.pointer, blocks.map, UInt32(blocks.rows), UInt32(blocks.columns)) == AOM_CODEC_OK
    }

    func encodePicture(presentationTime: Int64, duration: Int, keyframe: Bool) -> Bool {
        packets = nil
        // libaom carries a frame's segment map (the active map, cyclic refresh) into the next from the frame
        // coded before it, where its decoder takes it from the slot the next predicts from: after a frame kept
        // only in another slot (a frame above layer 0, kept for its refinement's parts), they differ and the
        // decoder refused the stream ("corrupted segment_ids"). Error-resilient, the next frame carries none.
        let keptElsewhere = lastRefreshMask != 0 && lastRefreshMask & (1 << nextFrame.readsSlot) == 0
        let flags = keyframe ? aom_enc_frame_flags_t(AOM_EFLAG_FORCE_KF) : keptElsewhere ? aom_enc_frame_flags_t(AOM_EFLAG_ERROR_RESILIENT) : 0
        lastRefreshMask = keyframe ? 0xFF : nextFrame.refreshMask
        nextFrame = TemporalLayers.Frame(layer: 0, refreshMask: 1)
        return aom_codec_encode(context.pointer, image.pointer, aom_codec_pts_t(presentationTime), UInt(duration), flags) == AOM_CODEC_OK
    }

    func nextPacket() -> CodedPacket? {
        while let packet = aom_codec_get_cx_data(context.pointer, &packets)?.pointee {
            guard packet.kind == AOM_CODEC_CX_FRAME_PKT else { continue }
            let unit = UnsafeRawBufferPointer(start: packet.data.frame.buf, count: packet.data.frame.sz)
            return CodedPacket(
                payload: Self.withoutTemporalDelimiter(unit),
                isKeyframe: (packet.data.frame.flags & aom_codec_frame_flags_t(AOM_FRAME_IS_KEY)) != 0)
        }
        return nil
    }

    /// The temporal unit without its leading temporal delimiter OBU (`0x12 0x00`): Matroska and ISO-BMFF
    /// store none (libavformat removes them), RTP drops them, and decoders do not need them; without it a
    /// frame's bytes are the same on the wire and in every file.
    static func withoutTemporalDelimiter(_ unit: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard unit.count >= 2, unit[0] == 0x12, unit[1] == 0x00 else { return unit }
        return UnsafeRawBufferPointer(rebasing: unit[2...])
    }

    func errorDetail() -> String { libraryErrorText(aom_codec_error(context.pointer), aom_codec_error_detail(context.pointer)) }
}

extension aom_codec_enc_cfg_t: LibraryEncoderConfiguration {}
