public import ScreenMedia
#if canImport(Glibc)
import Glibc  // log2
#endif

/// The realtime video encoder: one flow for every codec, over an ``EncoderBackend`` for the library.
///
/// Converts BGRA to I420 or I444 (``VideoEncoderConfiguration/chroma``) with libyuv, only the changed rectangles (``EncoderInput``), and codes only the changed
/// 16×16 blocks (the library's active map). The first frame, a frame at a new size and a frame after
/// ``requestKeyframe()`` are keyframes. Rate control is CBR with a buffer model in milliseconds; its target and
/// quantizer bounds change while encoding (``setRate(targetKbps:quantizers:)``) without a keyframe. Holds a codec
/// library's context, which is not thread-safe: one encoder belongs to one thread.
public final class RealtimeEncoder: VideoEncoder {
    public let configuration: VideoEncoderConfiguration
    public var codec: VideoCodec { backend.codec }

    private let backend: any EncoderBackend
    private var input: EncoderInput
    private var isOpen = false
    /// What the rate control aims at now; the library is told on every change.
    public private(set) var rate: RateControl
    /// The chroma format it codes, decided on the first frame (``VideoEncoderConfiguration/chromaFollowsContent``).
    public private(set) var chroma: ChromaFormat?
    /// The frame-size cap the library has (``capFrameSize()``).
    private var appliedFramePercent: Int?
    /// The lowest quantizer the library may use now, over ``RateControl/minQuantizer``, while the target follows
    /// the link (``followFrameSize(codedBytes:)``).
    private var quantizerFloor = 0

    public init(configuration: VideoEncoderConfiguration) {
        self.configuration = configuration
        backend = switch configuration.codec {
        case .av1: AV1EncoderBackend()
        case .vp8, .vp9: VPXEncoderBackend(codec: configuration.codec)
        }
        input = EncoderInput(
            usesActiveMap: configuration.usesActiveMap,
            temporalLayers: TemporalLayers(count: configuration.temporalLayers))
        rate = configuration.followsNetwork
            ? RateControl(targetKbps: configuration.bitrateKbps).followingTheLink()
            : RateControl(targetKbps: configuration.bitrateKbps)
    }

    public func requestKeyframe() { input.requestKeyframe() }

    public func encode(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        if input.needsReopening(for: frame) { try open(for: frame) }
        let (keyframe, presentationTime, wholeFrame, layer) = input.prepare(frame)
        let codedBytes = try encodePicture(frame, presentationTime: presentationTime, keyframe: keyframe, wholeFrame: wholeFrame, layer: layer, output: output)
        if rate.followsLink, !keyframe { try followFrameSize(codedBytes: codedBytes) }
    }

    public var hasUnrefinedChanges: Bool { input.hasUnrefinedChanges }

    public func skip(_ frame: VideoFrame) { input.skip(frame) }

    /// Under a target that follows the network, frames must also fit the link's delay: the rate control's buffer
    /// shrinks to ``RateControl/linkFollowingBufferMilliseconds`` (all of it the level aimed at: a buffer the
    /// gaps between changes fill is not taken as leave to code finer), no frame other than a keyframe may be
    /// larger than ``RateControl/linkFollowingFrameMilliseconds`` of the target (``capFrameSize()``, and
    /// where the library overshoots that, ``followFrameSize(codedBytes:)``), and the quantizer may go to the
    /// codec's coarsest, so that a whole new page of text gets as small as it can. An encoder whose configuration says so
    /// (``VideoEncoderConfiguration/followsNetwork``) is set up like this from its first frame.
    public func setTargetBitrate(kbps: Int) throws {
        if !rate.followsLink {
            let bounded = rate.followingTheLink()
            if isOpen { try backend.require(applyRate(bounded), "refused a rate-control buffer of \(bounded.bufferMilliseconds) ms", .encoderFailed) }
            rate = bounded
        }
        try setRate(targetKbps: kbps)
    }

    /// Caps the next frame at ``RateControl/linkFollowingFrameMilliseconds`` of the target. The libraries cap a
    /// frame as a share of their average frame, which is the target times the time since the frame before (they
    /// take the frame rate from the timestamps: a screen that changes twice a second is coded at 2 fps, and frames
    /// held back for the link make the gaps longer; left alone, a page change after a gap of a second could spend
    /// a second's worth of the link).
    private func capFrameSize() throws(CodecError) {
        let interval = 1000 / configuration.framesPerSecond
        let averageFrame = max(interval, input.millisecondsSincePreviousFrame.map(Double.init) ?? interval)
        let percent = max(1, Int((Double(RateControl.linkFollowingFrameMilliseconds) * 100 / averageFrame).rounded()))
        guard percent != appliedFramePercent else { return }
        try backend.require(backend.setMaximumInterFrame(percentOfAverage: percent), "refused a largest frame of \(percent) % of the average", .encoderFailed)
        appliedFramePercent = percent
    }

    public func setFasterSpeed(_ faster: Bool) throws {
        guard let speed = backend.speed(faster: faster, configured: configuration.speed) else { return }
        try backend.require(backend.setSpeed(speed), "refused speed \(speed)", .encoderFailed)
    }

    public func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        guard isOpen, !input.needsReopening(for: frame), let (presentationTime, layer) = input.prepareRefinement(frame) else { return }
        var refinement = rate
        refinement.maxQuantizer = min(rate.maxQuantizer, RateControl.refinementMaxQuantizer)
        refinement.minQuantizer = min(rate.minQuantizer, refinement.maxQuantizer)
        try backend.require(backend.setRate(refinement), "refused the refinement's quantizer", .encoderFailed)
        defer { _ = applyRate(rate) }
        try encodePicture(frame, presentationTime: presentationTime, keyframe: false, wholeFrame: false, layer: layer, output: output)
    }

    /// Changes the target bit rate (kbit/s, at least ``RateControl/lowestKbps``) and, when given, the quantizer
    /// bounds (of 0–63) for the frames that follow: no keyframe, no reopening. Before the first frame it only
    /// sets what the library will be opened with.
    public func setRate(targetKbps: Int, quantizers: ClosedRange<Int>? = nil) throws {
        var next = rate
        next.targetKbps = max(RateControl.lowestKbps, targetKbps)
        if let quantizers {
            next.minQuantizer = max(0, min(63, quantizers.lowerBound))
            next.maxQuantizer = max(next.minQuantizer, min(63, quantizers.upperBound))
        }
        guard next != rate else { return }
        if isOpen { try backend.require(applyRate(next), "refused a bit rate of \(next.targetKbps) kbit/s", .encoderFailed) }
        rate = next
    }

    /// Hands `rate` to the open library, its lowest quantizer raised to ``quantizerFloor``.
    private func applyRate(_ rate: RateControl) -> Bool {
        var floored = rate
        floored.minQuantizer = min(rate.maxQuantizer, max(rate.minQuantizer, quantizerFloor))
        return backend.setRate(floored)
    }

    /// Keeps the next frames within the link's delay where the library's rate control did not keep this one: its
    /// cap (``capFrameSize()``) bounds what the library aims a frame at, not what it codes, and a page of text
    /// after small changes comes out two or three times larger than aimed at. A frame larger than
    /// ``RateControl/linkFollowingFrameMilliseconds`` of the target raises the lowest quantizer the next ones may
    /// use above the one it was coded with, by ``RateControl/quantizerStepsPerHalving`` for each halving it
    /// needed; a frame under 60 % of it lowers that floor, by 2 or by as much for each halving below 60 %
    /// (a page's size predicts the next page's; smaller changes, or a link that came back, let the quality come
    /// back within a few frames; between 60 and 110 % it holds, so that it does not swing).
    private func followFrameSize(codedBytes: Int) throws(CodecError) {
        let budget = Double(RateControl.linkFollowingFrameMilliseconds * rate.targetKbps) / 8
        let ratio = Double(codedBytes) / budget
        var floor = quantizerFloor
        if ratio > 1.1, let last = backend.lastQuantizer() {
            floor = max(floor, last + Int((Double(RateControl.quantizerStepsPerHalving) * log2(ratio)).rounded(.up)))
        } else if ratio < 0.6 {
            floor -= max(2, Int((Double(RateControl.quantizerStepsPerHalving) * log2(0.6 / max(ratio, 1e-3))).rounded()))
        }
        floor = min(rate.maxQuantizer, max(rate.minQuantizer, floor))
        guard floor != max(rate.minQuantizer, quantizerFloor) else { return }
        quantizerFloor = floor
        try backend.require(applyRate(rate), "refused a lowest quantizer of \(floor)", .encoderFailed)
    }

    /// Encodes the prepared picture: only the active map's blocks unless `wholeFrame`. Returns the bytes coded.
    @discardableResult
    private func encodePicture(
        _ frame: VideoFrame, presentationTime: Int64, keyframe: Bool, wholeFrame: Bool, layer: TemporalLayers.Frame,
        output: (EncodedFrame) throws -> Void
    ) throws -> Int {
        let duration = max(1, Int((1000 / configuration.framesPerSecond).rounded()))
        let layered = input.layers.count > 1 ? layer : nil
        if rate.followsLink, !keyframe { try capFrameSize() }
        func encode(_ blocks: ActiveBlocks?) -> Bool {
            backend.encode(
                presentationTime: presentationTime, duration: duration,
                options: FrameCodingOptions(keyframe: keyframe, activeBlocks: blocks, layer: layered))
        }
        let encoded: Bool
        if let rows = input.activeMap?.rows, let columns = input.activeMap?.columns {
            encoded = wholeFrame
                ? encode(ActiveBlocks(map: nil, rows: rows, columns: columns))
                : input.activeMapBytes { encode(ActiveBlocks(map: $0, rows: rows, columns: columns)) } ?? false
        } else {
            encoded = encode(nil)
        }
        try backend.require(encoded, "could not encode a frame", .encoderFailed)
        var codedBytes = 0
        while let (payload, isKeyframe) = backend.nextPacket() {
            codedBytes += payload.count
            try output(EncodedFrame(
                codec: codec, payload: payload, isKeyframe: isKeyframe, width: frame.width, height: frame.height,
                captureTime: frame.captureTime, wallClock: frame.wallClock, metadata: frame.metadata, temporalLayer: layer.layer))
        }
        return codedBytes
    }

    private func open(for frame: VideoFrame) throws(CodecError) {
        isOpen = false
        let chroma = self.chroma ?? Self.chroma(for: frame, configuration)
        self.chroma = chroma
        try input.reopen(width: frame.width, height: frame.height, chroma: chroma)
        guard let picture = input.picture else { return }
        try backend.open(picture: picture, rate: rate, configuration: configuration)
        appliedFramePercent = nil
        quantizerFloor = 0
        isOpen = true
    }
}

@available(*, unavailable, message: "a codec library's context is not thread-safe")
extension RealtimeEncoder: Sendable {}

extension RealtimeEncoder {
    /// The configuration's chroma format, or 4:2:0 where it follows the content and `frame` has too little
    /// coloured detail for 4:4:4 to show.
    static func chroma(for frame: VideoFrame, _ configuration: VideoEncoderConfiguration) -> ChromaFormat {
        guard configuration.chroma == .yuv444, configuration.chromaFollowsContent else { return configuration.chroma }
        return ColourDetail.share(of: frame) >= ChromaChoice.colourDetailShare ? .yuv444 : .yuv420
    }
}

/// What the rate control aims at: CBR at a target, within quantizer bounds, with a buffer model in milliseconds
/// of the target rate (how far the library lets the sent bytes run ahead of the target, and how early it reacts).
public struct RateControl: Sendable, Hashable {
    public var targetKbps: Int
    public var minQuantizer = 4
    public var maxQuantizer = 52
    public var bufferInitialMilliseconds = 500
    public var bufferOptimalMilliseconds = 600
    public var bufferMilliseconds = 1000
    /// Whether the target follows the network (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    public var followsLink = false

    public init(targetKbps: Int) { self.targetKbps = max(Self.lowestKbps, targetKbps) }

    /// The coarsest quantizer of libaom and libvpx (0–63).
    public static let coarsestQuantizer = 63

    /// This rate control set up for a target that follows the link (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    func followingTheLink() -> RateControl {
        var following = self
        following.followsLink = true
        following.maxQuantizer = Self.coarsestQuantizer
        following.bufferMilliseconds = Self.linkFollowingBufferMilliseconds
        following.bufferOptimalMilliseconds = Self.linkFollowingBufferMilliseconds
        following.bufferInitialMilliseconds = Self.linkFollowingBufferMilliseconds
        return following
    }

    /// Below this the libraries' rate control no longer holds a screen's keyframes near the target.
    public static let lowestKbps = 50

    /// The rate-control buffer while the target follows the network (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    public static let linkFollowingBufferMilliseconds = 400
    /// The largest frame other than a keyframe while the target follows the network, in milliseconds of the
    /// target: below the buffer, since the libraries overshoot a page change's budget (until the quantizer floor
    /// catches up), and since whatever is on its way when a link narrows is carried at the narrow rate (400 ms
    /// let 75–136 KB frames into a link that fell from 2 Mbit/s to 500 kbit/s, and TCP stalled on the losses).
    public static let linkFollowingFrameMilliseconds = 300

    /// How far the quantizer (of 0–63) goes for a frame half as large, about (libaom and libvpx, text).
    static let quantizerStepsPerHalving = 6

    /// The highest quantizer a refinement may use: text that was coded at whatever the bit rate allowed while it
    /// changed is coded again at least this finely once it stands still.
    static let refinementMaxQuantizer = 12
}

/// How one frame is to be coded.
struct FrameCodingOptions {
    var keyframe: Bool
    /// The blocks to code; nil when the encoder uses no active map.
    var activeBlocks: ActiveBlocks?
    /// Its temporal layer and references; nil when the encoder codes one layer.
    var layer: TemporalLayers.Frame?
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
    /// The library's speed for a busy machine (`faster`) or as configured; nil when there is nothing to change.
    func speed(faster: Bool, configured: Int?) -> Int?
    func setSpeed(_ speed: Int) -> Bool
    /// Caps frames other than keyframes at this share of the library's average frame.
    func setMaximumInterFrame(percentOfAverage: Int) -> Bool
    /// The quantizer (0–63) the last frame was coded with; nil when the library cannot tell.
    func lastQuantizer() -> Int?
    /// Encodes the picture (timestamps and duration in milliseconds).
    func encodePicture(presentationTime: Int64, duration: Int, keyframe: Bool) -> Bool
    /// The next compressed frame of the last encode, as it goes on the wire and into files (lent until the next
    /// call), or nil when there is none left.
    func nextPacket() -> (payload: UnsafeRawBufferPointer, isKeyframe: Bool)?
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
