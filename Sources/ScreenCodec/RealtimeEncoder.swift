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
    /// A changed picture refined in parts while the target follows the link (``refinesInParts``).
    private var steps = RefinementSteps()

    public init(configuration: VideoEncoderConfiguration) {
        self.configuration = configuration
        backend = switch configuration.codec {
        case .av1: AV1EncoderBackend()
        case .vp8, .vp9: VPXEncoderBackend(codec: configuration.codec)
        case .h264: OpenH264EncoderBackend()
        }
        input = EncoderInput(
            usesActiveMap: configuration.usesActiveMap && configuration.codec != .h264,
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
        // A library that skipped the frame to hold its rate (openh264) owes the keyframe still.
        if keyframe, codedBytes == 0 { input.requestKeyframe() }
        if rate.followsLink, !keyframe { try followFrameSize(codedBytes: codedBytes) }
        // Parts follow a change (not a keepalive), from the quantizer it was coded with; none where the library
        // cannot predict from the change (a frame above layer 0 that only LAST could read).
        if refinesInParts, input.hasUnrefinedChanges, codedBytes > 0 {
            steps.changed(codedAt: layer.isReference || backend.predictsFromAnySlot ? backend.lastQuantizer() : nil)
        }
    }

    public var hasUnrefinedChanges: Bool { refinesInParts ? steps.nextQuantizer != nil : input.hasUnrefinedChanges }

    /// While the link holds the target below the configured rate, a change is refined in parts, from the next
    /// tick on (``RefinementSteps``): a thin uplink is used without a frame taking much more than a tick of it.
    /// Where the link carries the configured rate, pages go whole and are refined once the screen is still (parts
    /// there would fill the configured rate with refinements, which every viewer, a thinned one too, is sent).
    /// Not by openh264, which lays out its frames' layers and references itself.
    public var refinesInParts: Bool { rate.followsLink && codec != .h264 && rate.targetKbps < configuration.bitrateKbps }

    /// The largest frame other than a keyframe, in milliseconds of the target, while it follows the link.
    private var frameMilliseconds: Int { refinesInParts ? RateControl.partMilliseconds : RateControl.linkFollowingFrameMilliseconds }

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

    /// Caps the next frame at ``RateControl/linkFollowingFrameMilliseconds`` of the target
    /// (``RateControl/partMilliseconds`` while refining in parts). The libraries cap a
    /// frame as a share of their average frame, which is the target times the time since the frame before (they
    /// take the frame rate from the timestamps: a screen that changes twice a second is coded at 2 fps, and frames
    /// held back for the link make the gaps longer; left alone, a page change after a gap of a second could spend
    /// a second's worth of the link).
    private func capFrameSize() throws(CodecError) {
        let interval = 1000 / configuration.framesPerSecond
        let averageFrame = max(interval, input.millisecondsSincePreviousFrame.map(Double.init) ?? interval)
        let percent = max(1, Int((Double(frameMilliseconds) * 100 / averageFrame).rounded()))
        guard percent != appliedFramePercent else { return }
        try backend.require(backend.setMaximumInterFrame(percentOfAverage: percent), "refused a largest frame of \(percent) % of the average", .encoderFailed)
        appliedFramePercent = percent
    }

    public func setFasterSpeed(_ faster: Bool) throws {
        guard let speed = backend.speed(faster: faster, configured: configuration.speed) else { return }
        try backend.require(backend.setSpeed(speed), "refused speed \(speed)", .encoderFailed)
    }

    public func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        guard isOpen, !input.needsReopening(for: frame) else { return }
        if refinesInParts {
            try refineStep(frame, output: output)
            return
        }
        guard let (presentationTime, layer) = input.prepareRefinement(frame) else { return }
        var refinement = rate
        refinement.maxQuantizer = min(rate.maxQuantizer, RateControl.refinementMaxQuantizer)
        refinement.minQuantizer = min(rate.minQuantizer, refinement.maxQuantizer)
        try backend.require(backend.setRate(refinement), "refused the refinement's quantizer", .encoderFailed)
        defer { _ = applyRate(rate) }
        try encodePicture(frame, presentationTime: presentationTime, keyframe: false, wholeFrame: false, layer: layer, output: output)
    }

    /// One part of a refinement in parts: the blocks coded since the change, again, at the next part's quantizer
    /// (neither finer nor coarser: the library's rate control would spend a still picture's budget on a few
    /// blocks, or none), which ``RefinementSteps`` moves so that a part takes about a tick of the link.
    private func refineStep(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws {
        guard let quantizer = steps.nextQuantizer else { return }
        let (presentationTime, layer) = input.prepareRefinementStep(frame)
        var part = rate
        (part.minQuantizer, part.maxQuantizer) = (quantizer, quantizer)
        try backend.require(backend.setRate(part), "refused a refinement's quantizer of \(quantizer)", .encoderFailed)
        defer { _ = applyRate(rate) }
        let bytes = try encodePicture(frame, presentationTime: presentationTime, keyframe: false, wholeFrame: false, layer: layer, output: output)
        steps.refined(at: backend.lastQuantizer() ?? quantizer, bytes: bytes, budgetBytes: frameMilliseconds * rate.targetKbps / 8)
        if steps.nextQuantizer == nil { input.finishRefinementSteps() }
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
        let budget = Double(frameMilliseconds * rate.targetKbps) / 8
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
        while let packet = backend.nextPacket() {
            codedBytes += packet.payload.count
            try output(EncodedFrame(
                codec: codec, payload: packet.payload, isKeyframe: packet.isKeyframe, width: frame.width, height: frame.height,
                captureTime: frame.captureTime, wallClock: frame.wallClock, metadata: frame.metadata,
                temporalLayer: packet.temporalLayer ?? layer.layer))
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
        steps.reset()
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
