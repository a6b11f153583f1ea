public import ScreenMedia
import Synchronization

/// Counters of a running pipeline, readable from any thread while the capture thread updates them.
public final class PipelineStatistics: Sendable {
    private let captured = Atomic<Int>(0)
    private let unchanged = Atomic<Int>(0)
    private let encoded = Atomic<Int>(0)
    private let keyframes = Atomic<Int>(0)
    private let keepalives = Atomic<Int>(0)
    private let refinements = Atomic<Int>(0)
    private let missed = Atomic<Int>(0)
    private let paused = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    private let encodeNanoseconds = Atomic<UInt64>(0)
    private let windowsCovered = Atomic<Int>(0)
    private let held = Atomic<Int>(0)
    private let stride = Atomic<Int>(1)
    /// What the last keyframe declared: 0 none yet, 1 4:2:0, 2 4:4:4.
    private let chroma = Atomic<Int>(0)

    public init() {}

    public struct Snapshot: Sendable, Equatable {
        /// Ticks on which the screen changed and was grabbed.
        public var framesCaptured: Int
        /// Ticks on which nothing changed: nothing grabbed, converted or encoded.
        public var framesUnchanged: Int
        /// Frames that left the encoder (including keepalives).
        public var framesEncoded: Int
        public var keyframes: Int
        public var keepalives: Int
        /// Unchanged pictures coded again at high quality once the screen stood still.
        public var refinements: Int
        /// Ticks skipped because capture and encoding took longer than the frame interval.
        public var missedTicks: Int
        /// Ticks skipped because the share was paused.
        public var pausedTicks: Int
        public var bytesEncoded: Int
        /// Time spent converting and encoding, summed.
        public var encodeSeconds: Double
        /// Windows hidden by `--mask-window` in the last frame.
        public var windowsCovered: Int
        /// Frames skipped before encoding because the network still carried earlier ones (their changes went
        /// with the next coded frame).
        public var framesHeld: Int = 0
        /// One changed frame in this many is coded: more than 1 while the machine is too busy to code them all.
        public var encodeStride: Int = 1
        /// The chroma format the stream's keyframes declare; nil before the first.
        public var chroma: ChromaFormat?
    }

    public func snapshot() -> Snapshot {
        Snapshot(
            framesCaptured: captured.load(ordering: .relaxed), framesUnchanged: unchanged.load(ordering: .relaxed),
            framesEncoded: encoded.load(ordering: .relaxed), keyframes: keyframes.load(ordering: .relaxed),
            keepalives: keepalives.load(ordering: .relaxed), refinements: refinements.load(ordering: .relaxed),
            missedTicks: missed.load(ordering: .relaxed),
            pausedTicks: paused.load(ordering: .relaxed),
            bytesEncoded: bytes.load(ordering: .relaxed),
            encodeSeconds: Double(encodeNanoseconds.load(ordering: .relaxed)) / 1e9,
            windowsCovered: windowsCovered.load(ordering: .relaxed), framesHeld: held.load(ordering: .relaxed),
            encodeStride: stride.load(ordering: .relaxed),
            chroma: [nil, .yuv420, .yuv444][chroma.load(ordering: .relaxed)])
    }

    func countCaptured() { captured.add(1, ordering: .relaxed) }
    func countUnchanged() { unchanged.add(1, ordering: .relaxed) }
    func countKeepalive() { keepalives.add(1, ordering: .relaxed) }
    func countRefinement() { refinements.add(1, ordering: .relaxed) }
    func countHeld() { held.add(1, ordering: .relaxed) }
    func setEncodeStride(_ value: Int) { stride.store(value, ordering: .relaxed) }
    func countPaused() { paused.add(1, ordering: .relaxed) }
    func countMissed(_ count: Int) { missed.add(count, ordering: .relaxed) }
    func countEncoded(bytes count: Int, keyframe: Bool) {
        encoded.add(1, ordering: .relaxed)
        bytes.add(count, ordering: .relaxed)
        if keyframe { keyframes.add(1, ordering: .relaxed) }
    }
    func setChroma(_ format: ChromaFormat) { chroma.store(format == .yuv444 ? 2 : 1, ordering: .relaxed) }
    func addEncodeTime(nanoseconds: UInt64) { encodeNanoseconds.add(nanoseconds, ordering: .relaxed) }
    func setWindowsCovered(_ count: Int) { windowsCovered.store(count, ordering: .relaxed) }
}
