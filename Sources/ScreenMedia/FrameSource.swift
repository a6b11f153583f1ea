import Synchronization

/// A thread-safe one-way flag that asks a running capture loop or pipeline to finish.
public final class StopSignal: Sendable {
    private let stopped = Atomic<Bool>(false)

    public init() {}

    public func stop() { stopped.store(true, ordering: .releasing) }

    public var isStopped: Bool { stopped.load(ordering: .acquiring) }
}

/// Receives what a ``FrameSource`` produces, on the source's capture thread.
public protocol FrameConsumer: AnyObject {
    /// A frame whose pixels changed (see ``VideoFrame/changedRects``), or the first frame, or a frame at a
    /// new size (`sizeChanged`: the consumer must start a new keyframe). The frame is lent for this call only.
    func consume(_ frame: VideoFrame, sizeChanged: Bool) throws
    /// A tick on which nothing changed: nothing was grabbed or converted. `frame` still holds the last picture.
    func consumeUnchanged(_ frame: VideoFrame, at time: MediaTime) throws
    /// `count` ticks were skipped because the previous tick overran its interval (the machine is too slow
    /// for the frame rate).
    func missedTicks(_ count: Int)
}

/// Something that produces screen frames: the seed's custom `OTVideoCapture`.
///
/// A source runs its capture loop on the calling thread (its display or stream handle belongs to that
/// thread) until `stop` is signalled, and hands frames to the consumer synchronously, so pixels are
/// never copied between capture and conversion.
public protocol FrameSource: AnyObject {
    /// Current capture size in pixels.
    var size: (width: Int, height: Int) { get }
    /// Captures at `framesPerSecond` until `stop` is signalled (returns normally) or capture fails (throws).
    func run(framesPerSecond: Double, stop: StopSignal, consumer: any FrameConsumer) throws
}

/// Compresses frames. One encoder belongs to one thread.
public protocol VideoEncoder: AnyObject {
    var codec: VideoCodec { get }
    /// Asks for the next encoded frame to be a keyframe (a subscriber joined or lost packets).
    func requestKeyframe()
    /// Encodes `frame`; calls `output` zero or more times with the compressed result.
    func encode(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws
    /// Whether parts of the picture were coded since the last ``refine(_:output:)``: at the quality the bit
    /// rate allowed while the screen changed.
    var hasUnrefinedChanges: Bool { get }
    /// Codes the unchanged last picture (`frame`, nothing changed in it) once more, at high quality where it
    /// was coded since the last refinement: what a screen that went still deserves, for a few frames' bytes.
    func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws
    /// Takes `frame`'s changes into the picture without coding them (the network cannot take a frame now): the
    /// next ``encode(_:output:)`` codes them with its own, and a requested keyframe stays requested.
    func skip(_ frame: VideoFrame)
    /// Aims the rate control at `kbps` from the next frame on, with no keyframe.
    func setTargetBitrate(kbps: Int) throws
    /// Codes at the codec's fastest speed while the machine is overloaded (`true`), or as configured again.
    func setFasterSpeed(_ faster: Bool) throws
}

/// Decompresses frames. One decoder belongs to one thread.
public protocol VideoDecoder: AnyObject {
    var codec: VideoCodec { get }
    /// Decodes one compressed frame and lends each resulting picture, stamped with the given capture time,
    /// wall clock and metadata, to `body`.
    func decode(
        _ payload: UnsafeRawBufferPointer, captureTime: MediaTime, wallClock: WallClockTime, metadata: FrameMetadata,
        _ body: (VideoFrame) throws -> Void) throws
}

extension VideoDecoder {
    /// Decodes one compressed frame whose timing does not matter (tests, tools).
    public func decode(
        _ payload: UnsafeRawBufferPointer, metadata: FrameMetadata = .empty, _ body: (VideoFrame) throws -> Void
    ) throws {
        try decode(
            payload, captureTime: .zero, wallClock: WallClockTime(secondsSince1970: 0, nanoseconds: 0), metadata: metadata,
            body)
    }
}

/// Receives decoded frames with their metadata (the seed's `renderer:didReceiveFrame:`).
public protocol VideoRenderer: AnyObject {
    /// One decoded picture with its capture time, wall clock and metadata; lent for this call only.
    func render(_ frame: VideoFrame) throws
}

/// Where encoded frames go: a file, a relay connection, a loopback to a subscriber.
public protocol EncodedFrameSink: AnyObject {
    /// Takes one encoded frame; the payload is lent for this call only.
    func write(_ frame: EncodedFrame) throws
    /// Completes the output (writes indexes, closes connections). Called once, at the end.
    func finish() throws
}

/// Requests for a picture from another thread (a relay connection, a WHIP session) to the capture thread's
/// encoder: a keyframe (someone needs a picture to start from), or a refresh (someone needs a frame now, any
/// kind: an HLS part is due on an idle screen, and the unchanged picture re-sent as a delta costs a few bytes).
public final class PictureRequests: Sendable {
    private let keyframe = Atomic<Bool>(false)
    private let refresh = Atomic<Bool>(false)

    public init() {}

    /// Asks for the next frame to be a keyframe, even if the screen is idle.
    public func requestKeyframe() { keyframe.store(true, ordering: .releasing) }

    /// Whether a keyframe was asked for since the last call; clears the request.
    public func takeKeyframe() -> Bool { keyframe.exchange(false, ordering: .acquiring) }

    /// Asks for a frame on the next tick, even if the screen is idle (a keepalive, sent early).
    public func requestRefresh() { refresh.store(true, ordering: .releasing) }

    /// Whether a frame was asked for since the last call; clears the request.
    public func takeRefresh() -> Bool { refresh.exchange(false, ordering: .acquiring) }
}

/// What the network lets the capture thread's encoder do, read by the capture thread every frame: the bit rate
/// to aim at, and whether to hold frames back for now (a link still carries earlier ones: a frame held is
/// skipped before encoding, its changes coded with the next one). Each connection that carries the frames speaks
/// through a ``Voice`` of its own (its uplink controller); the most cautious voice wins.
public final class EncoderPacing: Sendable {
    /// One connection's say.
    public final class Voice: Sendable {
        fileprivate let target = Atomic<Int>(0)
        /// Until when it holds frames back, nanoseconds of the monotonic clock (``MonotonicClock``); 0: it does
        /// not, `UInt64.max`: until it says otherwise.
        fileprivate let holdingUntil = Atomic<UInt64>(0)

        public func setTarget(kbps: Int) { target.store(max(1, kbps), ordering: .releasing) }
        /// Holds frames back until `seconds` of the monotonic clock (its nanoseconds over 10⁹): a link busy for
        /// a known while frees itself without another word; `.infinity` holds until the next call.
        public func setHoldsFrames(untilSeconds seconds: Double) {
            let nanoseconds: UInt64 = seconds.isNaN || seconds <= 0 ? 0 : seconds >= Double(UInt64.max) / 1e9 ? .max : UInt64(seconds * 1e9)
            holdingUntil.store(nanoseconds, ordering: .releasing)
        }
    }

    private let voices = Mutex<[Voice]>([])

    public init() {}

    /// A new voice, heard from now on.
    public func addVoice() -> Voice {
        let voice = Voice()
        voices.withLock { $0.append(voice) }
        return voice
    }

    /// The lowest bit rate a voice asks for, kbit/s; nil while none has.
    public var targetKbps: Int? {
        voices.withLock { voices in
            voices.lazy.map { $0.target.load(ordering: .acquiring) }.filter { $0 > 0 }.min()
        }
    }

    /// Whether any voice holds frames back now.
    public var holdsFrames: Bool {
        let now = MonotonicClock().now()
        return voices.withLock { voices in voices.contains { $0.holdingUntil.load(ordering: .acquiring) > now } }
    }
}

/// Whether the share is paused: set from anywhere (the control socket), read by the capture thread every tick.
public final class PauseSwitch: Sendable {
    private let paused = Atomic<Bool>(false)

    public init() {}

    public var isPaused: Bool { paused.load(ordering: .acquiring) }
    public func set(paused value: Bool) { paused.store(value, ordering: .releasing) }
}

/// Whether the share's sound is muted (`screenpub mute`): set from anywhere, read by the audio thread.
public final class MuteSwitch: Sendable {
    private let muted = Atomic<Bool>(false)

    public init() {}

    public var isMuted: Bool { muted.load(ordering: .acquiring) }
    public func set(muted value: Bool) { muted.store(value, ordering: .releasing) }
}
