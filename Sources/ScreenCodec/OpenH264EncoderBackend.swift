import COpenH264
import COpenH264Shims
import ScreenMedia

/// Cisco's openh264 in its screen-content realtime mode: H.264 Constrained Baseline, 4:2:0 in BT.601 studio range,
/// Annex B access units with the SPS and PPS before each IDR.
///
/// Constrained Baseline rather than High (CABAC, 12–18 % fewer bytes on text): a decoder may hold a Main or High
/// picture back for reordering unless the SPS says there is none, and openh264's does, by a frame (measured; Apple's
/// decoders do too, which is why libwebrtc rewrites such SPSs). At 5 fps that is 200 ms on every frame, and a still
/// screen's last change never shows. Baseline has no reordering, so every decoder shows a frame when it has it.
///
/// Chosen over x264 by measurement (docs/performance.md, "H.264"; `Benchmarks/h264-libraries.sh`): on text its
/// screen-content tools (scrolling and static-block detection) need a third to a quarter of x264's bytes for the
/// same SSIM, its temporal layers are native (x264 has none for realtime), and it is BSD-licensed. Its rate control
/// holds the target by skipping frames rather than by coarser quantizers (it ignores quantizer bounds on screen
/// content): a skipped frame sends nothing and the next change, or the still screen's refinement, carries the
/// picture. It has no active map: it finds unchanged blocks by itself.
final class OpenH264EncoderBackend: EncoderBackend {
    let codec = VideoCodec.h264
    var library: String { "openh264" }
    var config = OpenH264RateSettings()

    private var encoder: UnsafeMutablePointer<ISVCEncoder?>?
    private var parameters = SEncParamExt()
    private var source = SSourcePicture()
    private var coded = SFrameBSInfo()
    /// The last encode's access unit, its NAL units gathered from every layer openh264 reports: memory of its own,
    /// grown when a frame needs more, so that ``nextPacket()`` can lend it until the next encode.
    private var accessUnit = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var accessUnitCount = 0
    private var pending: (isKeyframe: Bool, temporalLayer: Int)?
    private var lastError = "no error"
    /// openh264 starts with an IDR by itself; a keyframe forced before it would make the second frame one too.
    private var hasCodedAFrame = false

    /// openh264's complexities, fastest first: ``VideoEncoderConfiguration/speed`` 2 is the lowest complexity.
    static let defaultSpeed = 1

    deinit {
        COpenH264Shims_destroyEncoder(encoder)
        accessUnit.deallocate()
    }

    func open(picture: YUVPicture, rate: RateControl, configuration: VideoEncoderConfiguration) throws(CodecError) {
        COpenH264Shims_destroyEncoder(encoder)
        encoder = nil
        if let refusal = VideoEncoderConfiguration.chromaRefusal(codec: codec, chroma: picture.chroma) {
            throw CodecError(.unsupportedConfiguration, refusal)
        }
        guard let created = COpenH264Shims_createEncoder() else {
            throw CodecError(.unsupportedConfiguration, "openh264 could not create an encoder")
        }
        encoder = created
        hasCodedAFrame = false
        try require(COpenH264Shims_defaultParameters(created, &parameters) == 0, "has no default parameters")
        // H.264 codes whole 4:2:0 sample pairs: an odd width or height loses its last column or row.
        let (width, height) = (max(2, picture.width & ~1), max(2, picture.height & ~1))
        config.setRealtime(width: width, height: height, threads: configuration.threads, rate: rate)
        parameters.iUsageType = SCREEN_CONTENT_REAL_TIME
        (parameters.iPicWidth, parameters.iPicHeight) = (Int32(width), Int32(height))
        parameters.iRCMode = RC_BITRATE_MODE
        parameters.bEnableFrameSkip = true
        parameters.fMaxFrameRate = Float(max(1, min(60, configuration.framesPerSecond)))
        parameters.iTemporalLayerNum = Int32(configuration.temporalLayers)
        parameters.iSpatialLayerNum = 1
        parameters.uiIntraPeriod = 0
        parameters.eSpsPpsIdStrategy = CONSTANT_ID
        // Keyframes only on request, as with the other codecs: its scene-change IDRs came on whole-picture
        // changes (a new window) and cost the same bytes as a predicted frame on page flips (measured).
        parameters.bEnableSceneChangeDetect = false
        parameters.iEntropyCodingModeFlag = 0
        parameters.iMultipleThreadIdc = UInt16(max(1, configuration.threads))
        parameters.iComplexityMode = Self.complexity(speed: configuration.speed ?? Self.defaultSpeed)
        parameters.sSpatialLayers.0.iVideoWidth = Int32(width)
        parameters.sSpatialLayers.0.iVideoHeight = Int32(height)
        parameters.sSpatialLayers.0.fFrameRate = parameters.fMaxFrameRate
        parameters.sSpatialLayers.0.uiProfileIdc = PRO_BASELINE
        // What libyuv made: BT.601 studio range; players otherwise guess (browsers guess BT.709).
        parameters.sSpatialLayers.0.bVideoSignalTypePresent = true
        parameters.sSpatialLayers.0.uiVideoFormat = UInt8(VF_UNDEF.rawValue)
        parameters.sSpatialLayers.0.bFullRange = false
        parameters.sSpatialLayers.0.bColorDescriptionPresent = true
        parameters.sSpatialLayers.0.uiColorPrimaries = UInt8(CP_SMPTE170M.rawValue)
        parameters.sSpatialLayers.0.uiTransferCharacteristics = UInt8(TRC_SMPTE170M.rawValue)
        parameters.sSpatialLayers.0.uiColorMatrix = UInt8(CM_SMPTE170M.rawValue)
        parameters.sSpatialLayers.0.uiLevelIdc = LEVEL_UNKNOWN
        parameters.sSpatialLayers.0.sSliceArgument.uiSliceMode = configuration.threads > 1 ? SM_FIXEDSLCNUM_SLICE : SM_SINGLE_SLICE
        parameters.sSpatialLayers.0.sSliceArgument.uiSliceNum = UInt32(max(1, configuration.threads))
        writeRate()
        try require(COpenH264Shims_initialize(created, &parameters) == 0, "refused a \(width)×\(height) screen-content encoder")

        source = SSourcePicture()
        source.iColorFormat = Int32(videoFormatI420.rawValue)
        (source.iPicWidth, source.iPicHeight) = (Int32(width), Int32(height))
        source.iStride = (Int32(picture.lumaStride), Int32(picture.chromaStride), Int32(picture.chromaStride), 0)
        source.pData = (picture.luma, picture.blueDifference, picture.redDifference, nil)
    }

    /// ``config``'s rate into the parameters: the target, a ceiling of twice it, and the quantizer bounds (0–63)
    /// on H.264's scale (0–51).
    private func writeRate() {
        let bitsPerSecond = Int32(clamping: Int(config.rc_target_bitrate) * 1000)
        parameters.iTargetBitrate = bitsPerSecond
        parameters.iMaxBitrate = bitsPerSecond.multipliedReportingOverflow(by: 2).overflow ? .max : bitsPerSecond * 2
        parameters.sSpatialLayers.0.iSpatialBitrate = parameters.iTargetBitrate
        parameters.sSpatialLayers.0.iMaxSpatialBitrate = parameters.iMaxBitrate
        parameters.iMinQp = Int32(Self.h264Quantizer(config.rc_min_quantizer))
        parameters.iMaxQp = Int32(Self.h264Quantizer(config.rc_max_quantizer))
    }

    static func h264Quantizer(_ quantizer: UInt32) -> Int { Int(min(63, quantizer)) * 51 / 63 }

    static func complexity(speed: Int) -> ECOMPLEXITY_MODE {
        switch speed {
        case ...0: HIGH_COMPLEXITY
        case 1: MEDIUM_COMPLEXITY
        default: LOW_COMPLEXITY
        }
    }

    /// The new target and ceiling at once; the quantizer bounds through the whole parameter set, which openh264
    /// takes without a keyframe.
    func applyConfiguration() -> Bool {
        guard let encoder else { return false }
        let (minimum, maximum) = (parameters.iMinQp, parameters.iMaxQp)
        writeRate()
        if minimum != parameters.iMinQp || maximum != parameters.iMaxQp {
            return COpenH264Shims_setOption(encoder, ENCODER_OPTION_SVC_ENCODE_PARAM_EXT, &parameters) == 0
        }
        var target = SBitrateInfo(iLayer: SPATIAL_LAYER_ALL, iBitrate: parameters.iTargetBitrate)
        var ceiling = SBitrateInfo(iLayer: SPATIAL_LAYER_ALL, iBitrate: parameters.iMaxBitrate)
        // The ceiling first when it rises, so that the target never stands above it.
        if ceiling.iBitrate >= target.iBitrate, COpenH264Shims_setOption(encoder, ENCODER_OPTION_MAX_BITRATE, &ceiling) != 0 { return false }
        return COpenH264Shims_setOption(encoder, ENCODER_OPTION_BITRATE, &target) == 0
    }

    /// openh264 finds unchanged blocks itself.
    func setActiveMap(_ blocks: ActiveBlocks) -> Bool { true }

    /// openh264 lays its frames out in layers itself (0, 2, 1, 2, … with three, like ``TemporalLayers``); each
    /// packet says the layer it coded.
    func setFrameLayer(_ frame: TemporalLayers.Frame) -> Bool { true }
    var predictsFromAnySlot: Bool { false }

    func speed(faster: Bool, configured: Int?) -> Int? {
        let normal = configured ?? Self.defaultSpeed
        let fastest = VideoEncoderConfiguration.speedRange(for: codec).upperBound
        return normal == fastest ? nil : faster ? fastest : normal
    }

    func setSpeed(_ speed: Int) -> Bool {
        guard let encoder else { return false }
        var complexity = Int32(Self.complexity(speed: speed).rawValue)
        return COpenH264Shims_setOption(encoder, ENCODER_OPTION_COMPLEXITY, &complexity) == 0
    }

    /// openh264 has no such cap: it keeps the rate by skipping frames.
    func setMaximumInterFrame(percentOfAverage: Int) -> Bool { true }

    /// The last frame's average QP on the 0–63 scale of the other libraries.
    func lastQuantizer() -> Int? {
        guard let encoder else { return nil }
        var statistics = SEncoderStatistics()
        guard COpenH264Shims_setOption(encoder, ENCODER_OPTION_GET_STATISTICS, &statistics) == 0 else { return nil }
        return Int(min(51, statistics.uiAverageFrameQP)) * 63 / 51
    }

    func encodePicture(presentationTime: Int64, duration: Int, keyframe: Bool) -> Bool {
        pending = nil
        guard let encoder else { return false }
        if keyframe, hasCodedAFrame, COpenH264Shims_forceIntraFrame(encoder) != 0 {
            lastError = "openh264 refused a keyframe request"
            return false
        }
        source.uiTimeStamp = presentationTime
        let result = COpenH264Shims_encodeFrame(encoder, &source, &coded)
        guard result == 0 else {
            lastError = "openh264 error \(result)"
            return false
        }
        guard coded.eFrameType != videoFrameTypeSkip, coded.eFrameType != videoFrameTypeInvalid else { return true }
        hasCodedAFrame = true
        gatherAccessUnit()
        return true
    }

    /// Copies every layer's NAL units into ``accessUnit`` (they are in buffers of openh264's own, not always
    /// side by side) and notes the frame's temporal layer.
    private func gatherAccessUnit() {
        accessUnitCount = 0
        var temporalLayer = 0
        let layerCount = Int(max(0, min(coded.iLayerNum, Int32(MAX_LAYER_NUM_OF_FRAME))))
        withUnsafeBytes(of: &coded.sLayerInfo) { raw in
            let layers = raw.bindMemory(to: SLayerBSInfo.self)
            for layer in layers.prefix(layerCount) {
                guard let lengths = layer.pNalLengthInByte, let bytes = layer.pBsBuf else { continue }
                let size = (0..<Int(max(0, layer.iNalCount))).reduce(0) { $0 + Int(max(0, lengths[$1])) }
                append(UnsafeRawBufferPointer(start: bytes, count: size))
                if layer.uiLayerType == UInt8(VIDEO_CODING_LAYER.rawValue) { temporalLayer = max(temporalLayer, Int(layer.uiTemporalId)) }
            }
        }
        guard accessUnitCount > 0 else { return }
        pending = (coded.eFrameType == videoFrameTypeIDR, temporalLayer)
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        let needed = accessUnitCount + bytes.count
        if needed > accessUnit.count {
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: max(needed, accessUnit.count * 2), alignment: 16)
            if accessUnitCount > 0, let old = accessUnit.baseAddress { grown.baseAddress?.copyMemory(from: old, byteCount: accessUnitCount) }
            accessUnit.deallocate()
            accessUnit = grown
        }
        guard let start = bytes.baseAddress, let end = accessUnit.baseAddress?.advanced(by: accessUnitCount) else { return }
        end.copyMemory(from: start, byteCount: bytes.count)
        accessUnitCount = needed
    }

    func nextPacket() -> CodedPacket? {
        guard let frame = pending else { return nil }
        pending = nil
        return CodedPacket(
            payload: UnsafeRawBufferPointer(rebasing: accessUnit[0..<accessUnitCount]), isKeyframe: frame.isKeyframe,
            temporalLayer: frame.temporalLayer)
    }

    func errorDetail() -> String { lastError }
}

/// The rate-control fields ``RealtimeEncoder`` sets on every library, kept for openh264, which takes a bit rate
/// and quantizer bounds rather than a configuration struct (``OpenH264EncoderBackend/applyConfiguration()``
/// hands them over).
struct OpenH264RateSettings: LibraryEncoderConfiguration {
    var g_w: UInt32 = 0
    var g_h: UInt32 = 0
    var g_threads: UInt32 = 1
    var g_lag_in_frames: UInt32 = 0
    var g_error_resilient: UInt32 = 0
    var rc_target_bitrate: UInt32 = 0
    var rc_min_quantizer: UInt32 = 0
    var rc_max_quantizer: UInt32 = 63
    var rc_undershoot_pct: UInt32 = 0
    var rc_overshoot_pct: UInt32 = 0
    var rc_buf_initial_sz: UInt32 = 0
    var rc_buf_optimal_sz: UInt32 = 0
    var rc_buf_sz: UInt32 = 0
    var rc_dropframe_thresh: UInt32 = 0
    var kf_max_dist: UInt32 = 0
}
