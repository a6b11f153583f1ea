import ScreenMedia
import Synchronization

/// Counters of the audio pipeline, readable from any thread.
public final class AudioStatistics: Sendable {
    private let captured = Atomic<Int>(0)
    private let muted = Atomic<Int>(0)
    private let encoded = Atomic<Int>(0)
    private let silent = Atomic<Int>(0)
    private let suppressed = Atomic<Int>(0)
    private let sent = Atomic<Int>(0)
    private let bytesEncoded = Atomic<Int>(0)
    private let bytesSent = Atomic<Int>(0)

    public init() {}

    public struct Snapshot: Sendable, Equatable {
        /// Samples per channel captured (muted or not).
        public var samplesCaptured: Int
        public var samplesMuted: Int
        public var framesEncoded: Int
        /// Frames Opus marked as silence (DTX).
        public var silentFrames: Int
        /// Silent frames not sent (between two sent ones).
        public var framesSuppressed: Int
        public var framesSent: Int
        public var bytesEncoded: Int
        public var bytesSent: Int
    }

    public func snapshot() -> Snapshot {
        Snapshot(
            samplesCaptured: captured.load(ordering: .relaxed), samplesMuted: muted.load(ordering: .relaxed),
            framesEncoded: encoded.load(ordering: .relaxed), silentFrames: silent.load(ordering: .relaxed),
            framesSuppressed: suppressed.load(ordering: .relaxed), framesSent: sent.load(ordering: .relaxed),
            bytesEncoded: bytesEncoded.load(ordering: .relaxed), bytesSent: bytesSent.load(ordering: .relaxed))
    }

    func countCaptured(samples: Int) { captured.add(samples, ordering: .relaxed) }
    func countMuted(samples: Int) { muted.add(samples, ordering: .relaxed) }
    func countEncoded(bytes: Int, silence: Bool) {
        encoded.add(1, ordering: .relaxed)
        bytesEncoded.add(bytes, ordering: .relaxed)
        if silence { silent.add(1, ordering: .relaxed) }
    }
    func countSuppressed() { suppressed.add(1, ordering: .relaxed) }
    func countSent(bytes: Int) {
        sent.add(1, ordering: .relaxed)
        bytesSent.add(bytes, ordering: .relaxed)
    }
}
