import Synchronization

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
