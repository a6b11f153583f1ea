public import ScreenMedia

/// The consumer side of a capture loop: stamps metadata, encodes and hands frames to the sinks.
///
/// Runs entirely on the capture thread, synchronously, so a frame's pixels go from the source's buffer through
/// conversion and encoding without being copied or queued, and nothing is allocated per frame.
///
/// Idle policy: a tick on which nothing changed costs no conversion and no encode. Only when the screen has been
/// unchanged for `keepaliveInterval` is the last picture encoded again (a tiny delta frame carrying fresh
/// metadata and timestamps), so that live viewers and recordings can tell "idle" from "stalled". Once the
/// screen has stood still for `refineAfter`, the blocks coded since the last such moment are coded once more at
/// high quality (``VideoEncoder/refine(_:output:)``): text that changed while the bit rate was tight ends up
/// sharp when people stop to read it. Under a target that follows the link, a change is refined in parts
/// instead, one at each unchanged tick the link takes, from the next on (``VideoEncoder/refinesInParts``): a page
/// goes as a coarse frame of about a tick of the link, then finer ones, so that no frame takes much longer than a
/// tick to arrive and the link stays busy.
public final class CapturePipeline: FrameConsumer {
    public struct Configuration: Sendable {
        public var metadata: MetadataPolicy
        /// Seconds without change before the unchanged picture is sent again; nil never sends one.
        public var keepaliveInterval: Double?
        /// Seconds the screen stays unchanged before what changed is coded again at high quality; nil never.
        public var refineAfter: Double?
        /// Stop after this many seconds of capture; nil runs until stopped.
        public var duration: Double?
        /// Keyframe and refresh requests (through a relay connection). A keyframe request is served on the next
        /// tick even when the screen is idle, by encoding the unchanged picture as a keyframe; a refresh by sending
        /// the unchanged picture as a keepalive, unless a frame goes anyway.
        public var pictureRequests: PictureRequests?
        /// While set, nothing is encoded or sent (not even keepalives or requested keyframes); the first tick
        /// after it is cleared sends the current picture as a keyframe.
        public var pause: PauseSwitch?
        /// The network's say (a relay connection's uplink controller): the encoder's target rate, and when to
        /// hold frames back. A held frame is skipped before encoding; its changes go with the next coded frame,
        /// which is coded as soon as frames are let through again, whether or not the screen changes meanwhile.
        public var pacing: EncoderPacing?
        /// The capture rate: when encoding takes most of the frame interval for a while (the machine is
        /// overloaded), only one changed frame in 2, 4 or 8 is coded (``EncodeLoad``) until the load passes. Nil:
        /// every frame is coded however long it takes.
        public var framesPerSecond: Double?

        public init(
            metadata: MetadataPolicy = .captureTime, keepaliveInterval: Double? = 5, refineAfter: Double? = 1,
            duration: Double? = nil, pictureRequests: PictureRequests? = nil, pause: PauseSwitch? = nil,
            pacing: EncoderPacing? = nil, framesPerSecond: Double? = nil
        ) {
            self.pacing = pacing
            self.framesPerSecond = framesPerSecond
            self.refineAfter = refineAfter
            self.pause = pause
            self.metadata = metadata
            self.keepaliveInterval = keepaliveInterval
            self.duration = duration
            self.pictureRequests = pictureRequests
        }
    }

    public let configuration: Configuration
    public let statistics: PipelineStatistics
    private let encoder: any VideoEncoder
    private let sinks: [any EncodedFrameSink]
    private let stop: StopSignal
    private let clock = MonotonicClock()
    private var firstTickTime: MediaTime?
    private var lastSentTime: MediaTime?
    /// When the screen last changed (a frame was encoded because of it).
    private var lastChangeTime: MediaTime?
    /// Paused on an earlier tick: the next unpaused one starts again with a keyframe.
    private var resumeWithKeyframe = false
    /// Changes of frames held back (``Configuration/pacing``) wait in the encoder to be coded.
    private var heldChanges = false
    /// The target rate the encoder was last given.
    private var appliedTargetKbps: Int?
    /// Whether the machine keeps up with encoding.
    private var load: EncodeLoad?
    /// A second rendition a relay asked for, coded from the same frames.
    private let rendition: RenditionEncoding?

    public init(
        configuration: Configuration, encoder: any VideoEncoder, sinks: [any EncodedFrameSink], stop: StopSignal,
        statistics: PipelineStatistics = PipelineStatistics(), rendition: RenditionEncoding? = nil
    ) {
        self.rendition = rendition
        self.configuration = configuration
        self.encoder = encoder
        self.sinks = sinks
        self.stop = stop
        self.statistics = statistics
        load = configuration.framesPerSecond.map { EncodeLoad(interval: 1 / max(0.1, $0)) }
    }

    public func consume(_ frame: VideoFrame, sizeChanged: Bool) throws {
        statistics.countCaptured()
        statistics.setWindowsCovered(frame.covers.windowCount)
        if isPaused(at: frame.captureTime) { return }
        renditionNeedsPicture = rendition?.update() == true || renditionNeedsPicture || sizeChanged
        try encodeChange(frame, sizeChanged: sizeChanged)
    }

    /// The rendition has just started, or its keyframe was asked for: its next frame is a keyframe, sent on this
    /// tick even when the screen is idle.
    private var renditionNeedsPicture = false

    private func encodeChange(_ frame: VideoFrame, sizeChanged: Bool) throws {
        if resumeWithKeyframe {
            // What changed while paused was never converted: convert the whole picture once.
            frame.markAllChanged()
        }
        if isHeld(frame) { return }
        if resumeWithKeyframe || sizeChanged || configuration.pictureRequests?.takeKeyframe() == true {
            resumeWithKeyframe = false
            encoder.requestKeyframe()
        }
        lastChangeTime = frame.captureTime
        try send(frame)
    }

    public func consumeUnchanged(_ frame: VideoFrame, at time: MediaTime) throws {
        statistics.countUnchanged()
        checkDuration(time)
        if isPaused(at: time) { return }
        if configuration.pacing?.holdsFrames == true { return }
        renditionNeedsPicture = rendition?.update() == true || renditionNeedsPicture
        if renditionNeedsPicture, let rendition, !heldChanges {
            // The rendition's first picture, or its asked-for keyframe, on an idle screen: its encoder converts the
            // whole picture on its first frame, so nothing needs marking as changed.
            frame.changedRects.removeAll(keepingCapacity: true)
            frame.metadata = configuration.metadata.metadata(for: frame)
            renditionNeedsPicture = false
            try rendition.encode(frame, refinement: false, keyframe: true, primaryTargetKbps: appliedTargetKbps ?? configuration.pacing?.targetKbps)
        }
        if heldChanges {
            // The link takes frames again: what changed while it did not goes now.
            frame.changedRects.removeAll(keepingCapacity: true)
            try encodeChange(frame, sizeChanged: false)
            return
        }
        if resumeWithKeyframe || configuration.pictureRequests?.takeKeyframe() == true {
            // Someone needs a picture to start from: send the unchanged one as a keyframe. After a pause, what
            // changed meanwhile was never converted.
            if resumeWithKeyframe { frame.markAllChanged() } else { frame.changedRects.removeAll(keepingCapacity: true) }
            resumeWithKeyframe = false
            encoder.requestKeyframe()
            try send(frame)
            return
        }
        // A change refined in parts (a target that follows the link) is refined from the next tick the link
        // takes on, a part a tick; otherwise once the screen has stood still for refineAfter.
        let partDue = encoder.refinesInParts && encoder.hasUnrefinedChanges
        if let still = configuration.refineAfter, encoder.hasUnrefinedChanges || rendition?.hasUnrefinedChanges == true, let lastChangeTime,
            partDue || (time - lastChangeTime).seconds >= still
        {
            statistics.countRefinement()
            frame.changedRects.removeAll(keepingCapacity: true)  // nothing to convert again
            try send(frame, refinement: true)
            return
        }
        // A refresh asked for (an HLS part due on an idle screen) is a keepalive sent early.
        let refreshAsked = configuration.pictureRequests?.takeRefresh() == true
        guard refreshAsked || configuration.keepaliveInterval.flatMap({ interval in lastSentTime.map { (time - $0).seconds >= interval } }) == true
        else { return }
        statistics.countKeepalive()
        frame.changedRects.removeAll(keepingCapacity: true)  // nothing to convert again
        try send(frame)
    }

    public func missedTicks(_ count: Int) { statistics.countMissed(count) }

    /// Finishes every sink (file trailers, connection close); call once after the capture loop ends.
    public func finish() throws { try Self.finish(sinks) }

    /// Finishes each of `sinks`, all of them even when one fails; throws the first failure.
    public static func finish(_ sinks: [any EncodedFrameSink]) throws {
        var firstError: (any Error)?
        for sink in sinks {
            do { try sink.finish() } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    /// Whether the network holds frames back now: then the frame's changes go into the encoder's picture, to be
    /// coded with the next frame let through.
    private func isHeld(_ frame: VideoFrame) -> Bool {
        guard configuration.pacing?.holdsFrames == true || load?.skipsNextFrame() == true else { return false }
        encoder.skip(frame)
        rendition?.skip(frame)
        heldChanges = true
        statistics.countHeld()
        return true
    }

    private func send(_ frame: VideoFrame, refinement: Bool = false) throws {
        heldChanges = false
        // Any frame answers a refresh asked for meanwhile.
        _ = configuration.pictureRequests?.takeRefresh()
        if let target = configuration.pacing?.targetKbps, target != appliedTargetKbps {
            try encoder.setTargetBitrate(kbps: target)
            appliedTargetKbps = target
        }
        frame.metadata = configuration.metadata.metadata(for: frame)
        let started = clock.now()
        // Closure literals, not a closure stored in a local: non-escaping, so nothing is allocated per frame.
        if refinement {
            try encoder.refine(frame) { try emit($0) }
        } else {
            try encoder.encode(frame) { try emit($0) }
        }
        if let rendition {
            let keyframe = renditionNeedsPicture
            renditionNeedsPicture = false
            try rendition.encode(frame, refinement: refinement, keyframe: keyframe, primaryTargetKbps: appliedTargetKbps)
        }
        let finished = clock.now()
        let nanoseconds = clock.nanoseconds(fromTicks: finished - started)
        statistics.addEncodeTime(nanoseconds: nanoseconds)
        if load?.encoded(taking: Double(nanoseconds) / 1e9, now: Double(clock.nanoseconds(fromTicks: finished)) / 1e9) == true {
            let stride = load?.stride ?? 1
            statistics.setEncodeStride(stride)
            try encoder.setFasterSpeed(stride > 1)
        }
        lastSentTime = frame.captureTime
        checkDuration(frame.captureTime)
    }

    private func emit(_ encoded: EncodedFrame) throws {
        statistics.countEncoded(bytes: encoded.payload.count, keyframe: encoded.isKeyframe)
        if encoded.isKeyframe, let format = CodedVideoFormat(codec: encoded.codec, keyframe: encoded.payload) {
            statistics.setChroma(format.chroma)
        }
        for sink in sinks { try sink.write(encoded) }
    }

    /// Whether this tick is skipped because the share is paused; remembers to resume with a keyframe.
    private func isPaused(at time: MediaTime) -> Bool {
        guard configuration.pause?.isPaused == true else { return false }
        resumeWithKeyframe = true
        statistics.countPaused()
        checkDuration(time)
        return true
    }

    private func checkDuration(_ time: MediaTime) {
        let first = firstTickTime ?? time
        firstTickTime = first
        if let duration = configuration.duration, (time - first).seconds >= duration { stop.stop() }
    }
}

@available(*, unavailable, message: "runs on the capture thread")
extension CapturePipeline: Sendable {}
