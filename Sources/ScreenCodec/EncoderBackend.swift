import ScreenMedia

/// How one frame is to be coded.
struct FrameCodingOptions {
    var keyframe: Bool
    /// The blocks to code; nil when the encoder uses no active map.
    var activeBlocks: ActiveBlocks?
    /// Its temporal layer and references; nil when the encoder codes one layer.
    var layer: TemporalLayers.Frame?
}

/// One compressed frame as it goes on the wire and into files, lent by the library until its next call.
struct CodedPacket {
    var payload: UnsafeRawBufferPointer
    var isKeyframe: Bool
    /// The temporal layer the library coded it in, where the library lays out the layers itself (openh264); nil
    /// where it codes the layer ``TemporalLayers`` gave it.
    var temporalLayer: Int? = nil
}

/// The library's active map for one frame: `rows` × `columns` bytes, one per 16×16 block, 1 = code it
/// (``ActiveMap``); a nil map lifts the restriction (keyframes, whole-frame changes).
struct ActiveBlocks {
    var map: UnsafeMutablePointer<UInt8>?
    var rows: Int
    var columns: Int
}

/// One codec library as ``RealtimeEncoder`` drives it: the thinnest wrapper of its C calls, which answer whether
/// the library accepted them (``errorDetail()`` says why not, ``require(_:_:_:)`` makes the message). What the
/// libraries share (the configuration's fields, rate changes, the active map before an encode) is written once,
/// in the extensions.
protocol EncoderBackend: AnyObject {
    associatedtype Configuration: LibraryEncoderConfiguration
    var codec: VideoCodec { get }
    /// The library's name, as messages start ("libaom …").
    var library: String { get }
    /// The configuration the library was opened with, changed by ``setRate(_:)``.
    var config: Configuration { get set }
    /// Opens the library (closing it first if open) to encode `picture`, whose planes it reads on every encode.
    func open(picture: YUVPicture, rate: RateControl, configuration: VideoEncoderConfiguration) throws(CodecError)
    /// Hands ``config`` to the open library.
    func applyConfiguration() -> Bool
    func setActiveMap(_ blocks: ActiveBlocks) -> Bool
    /// The next frame's layer and references.
    func setFrameLayer(_ frame: TemporalLayers.Frame) -> Bool
    /// Whether a frame may predict from a slot other than 0 (``TemporalLayers/Frame/readsSlot``).
    var predictsFromAnySlot: Bool { get }
    /// The library's speed for a busy machine (`faster`) or as configured; nil when there is nothing to change.
    func speed(faster: Bool, configured: Int?) -> Int?
    func setSpeed(_ speed: Int) -> Bool
    /// Caps frames other than keyframes at this share of the library's average frame.
    func setMaximumInterFrame(percentOfAverage: Int) -> Bool
    /// The quantizer (0–63) the last frame was coded with; nil when the library cannot tell.
    func lastQuantizer() -> Int?
    /// Encodes the picture (timestamps and duration in milliseconds).
    func encodePicture(presentationTime: Int64, duration: Int, keyframe: Bool) -> Bool
    /// The next compressed frame of the last encode, or nil when there is none left (a library that skipped the
    /// frame to hold its rate has none).
    func nextPacket() -> CodedPacket?
    /// The library's last error, with its detail.
    func errorDetail() -> String
}

extension EncoderBackend {
    /// Changes the rate control of the open library: no keyframe, no reopening.
    func setRate(_ rate: RateControl) -> Bool {
        config.setRate(rate)
        return applyConfiguration()
    }

    /// Encodes the picture as `options` say.
    func encode(presentationTime: Int64, duration: Int, options: FrameCodingOptions) -> Bool {
        if let layer = options.layer, !setFrameLayer(layer) { return false }
        if let blocks = options.activeBlocks, !setActiveMap(blocks) { return false }
        return encodePicture(presentationTime: presentationTime, duration: duration, keyframe: options.keyframe)
    }

    /// Throws "`library` `what`: the library's error" unless `accepted`.
    func require(_ accepted: Bool, _ what: @autoclosure () -> String, _ failure: CodecFailure = .unsupportedConfiguration) throws(CodecError) {
        guard !accepted else { return }
        throw CodecError(failure, "\(library) \(what()): \(errorDetail())")
    }
}

/// The encoder-configuration fields libaom and libvpx share by name and type (libaom's configuration began as a
/// copy of libvpx's), so that the rate control is written to either in one place.
protocol LibraryEncoderConfiguration {
    var g_w: UInt32 { get set }
    var g_h: UInt32 { get set }
    var g_threads: UInt32 { get set }
    var g_lag_in_frames: UInt32 { get set }
    var g_error_resilient: UInt32 { get set }
    var rc_target_bitrate: UInt32 { get set }
    var rc_min_quantizer: UInt32 { get set }
    var rc_max_quantizer: UInt32 { get set }
    var rc_undershoot_pct: UInt32 { get set }
    var rc_overshoot_pct: UInt32 { get set }
    var rc_buf_initial_sz: UInt32 { get set }
    var rc_buf_optimal_sz: UInt32 { get set }
    var rc_buf_sz: UInt32 { get set }
    var rc_dropframe_thresh: UInt32 { get set }
    var kf_max_dist: UInt32 { get set }
}

extension LibraryEncoderConfiguration {
    /// The settings every realtime encode here shares: the picture's size, no look-ahead, keyframes only at the
    /// start, on size changes and on request (an idle screen sends no frames, so a frame-count interval would
    /// mean nothing), and `rate`.
    mutating func setRealtime(width: Int, height: Int, threads: Int, rate: RateControl) {
        g_w = UInt32(width)
        g_h = UInt32(height)
        g_threads = UInt32(max(1, threads))
        g_lag_in_frames = 0
        g_error_resilient = 0
        rc_dropframe_thresh = 0
        kf_max_dist = 0x7fff_ffff
        setRate(rate)
    }

    mutating func setRate(_ rate: RateControl) {
        rc_target_bitrate = UInt32(rate.targetKbps)
        rc_min_quantizer = UInt32(rate.minQuantizer)
        rc_max_quantizer = UInt32(rate.maxQuantizer)
        rc_undershoot_pct = 50
        rc_overshoot_pct = 50
        rc_buf_initial_sz = UInt32(rate.bufferInitialMilliseconds)
        rc_buf_optimal_sz = UInt32(rate.bufferOptimalMilliseconds)
        rc_buf_sz = UInt32(rate.bufferMilliseconds)
    }
}
