/// Follows the publisher's uplink from the relay's acknowledgements, as a pure state machine tested with made-up
/// times: what the link carries (its delivery rate), how long frames queue on the way, the encoder's target rate
/// and whether the next frame should wait.
///
/// Each frame sent is timed when it is handed to the connection; its acknowledgement says when the relay had all
/// of it, on the relay's clock. Their difference is the one-way delay plus an unknown clock offset; its minimum
/// over the last ``Configuration/baseDelayWindowSeconds`` is the empty link, so what a frame spends above it is
/// its queuing and transfer time (as in WebRTC's delay-based estimation, GCC). Frames that were sent while the one
/// before was still on its way arrived back to back: the gap between their arrivals is the time the link took to
/// carry them, which gives the delivery rate even when the encoder sends less than the link could carry.
///
/// The target backs off multiplicatively (to ``Configuration/backoff`` of the delivery rate) when frames queue
/// longer than ``Configuration/targetDelayMilliseconds`` behind others, probes upwards gently
/// (``Configuration/probePerSecond``) once they have not for a while, never goes above what the link delivers,
/// and never above ``Configuration/maximumKbps`` (`--bitrate`) or below ``Configuration/minimumKbps``.
/// While more is in flight than the link carries in the target delay, the next frame waits (``admitsFrame(queuedBytes:now:)``):
/// the capture side skips it before encoding and codes its changes with the next one.
public struct UplinkController: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// The configured bit rate (`--bitrate`): never exceeded.
        public var maximumKbps: Int
        /// The lowest target: below it frames are skipped rather than coded worse.
        public var minimumKbps: Int
        /// How long frames may queue behind others before the target backs off, and how much may be in flight
        /// (at the delivery rate) before the next frame waits.
        public var targetDelayMilliseconds: Double
        /// After backing off, the share of the delivery rate the target goes to.
        public var backoff: Double
        /// How fast the target climbs while nothing queues, per second (a share of itself).
        public var probePerSecond: Double
        /// Seconds without queuing before the target climbs after a back-off.
        public var holdAfterBackoffSeconds: Double
        public var baseDelayWindowSeconds: Double

        public init(
            maximumKbps: Int, minimumKbps: Int = 100, targetDelayMilliseconds: Double = 150, backoff: Double = 0.85,
            probePerSecond: Double = 0.08, holdAfterBackoffSeconds: Double = 1, baseDelayWindowSeconds: Double = 10
        ) {
            self.maximumKbps = max(1, maximumKbps)
            self.minimumKbps = min(minimumKbps, self.maximumKbps)
            self.targetDelayMilliseconds = targetDelayMilliseconds
            self.backoff = backoff
            self.probePerSecond = probePerSecond
            self.holdAfterBackoffSeconds = holdAfterBackoffSeconds
            self.baseDelayWindowSeconds = baseDelayWindowSeconds
        }
    }

    /// Why the target is what it is (`screenpub status`).
    public enum Reason: Sendable, Hashable {
        /// No acknowledgement yet (or the relay sends none): the configured rate.
        case configured
        /// Frames queued `queuedMilliseconds` behind others: backed off to what the link delivered.
        case backedOff(queuedMilliseconds: Int)
        /// The link carries the target without queuing: climbing towards the configured rate.
        case probing
        /// At what the link was measured to deliver.
        case linkLimited
        /// At the configured rate, which the link carries.
        case atMaximum

        public var description: String {
            switch self {
            case .configured: "the configured --bitrate (no measurement of the uplink yet)"
            case .backedOff(let queued): "backed off: frames queued \(queued) ms on the uplink"
            case .probing: "probing upwards: the uplink carries the current rate without queuing"
            case .linkLimited: "what the uplink was measured to deliver"
            case .atMaximum: "the configured --bitrate, which the uplink carries"
            }
        }
    }

    private struct Sent {
        var sequence: UInt64
        var bytes: Int
        /// Publisher's clock, seconds.
        var at: Double
    }

    public let configuration: Configuration
    public private(set) var targetKbps: Int
    public private(set) var reason = Reason.configured
    /// Frames sent and not yet acknowledged, oldest first, and their bytes.
    private var inFlight: [Sent] = []
    public private(set) var bytesInFlight = 0
    /// Recent one-way delays (relay clock − publisher clock, ms) with when they were seen, for the windowed minimum.
    private var delays: [(delay: Double, at: Double)] = []
    /// The delivery rate: bytes and seconds of back-to-back transfer, both decaying.
    private var deliveredBytes = 0.0
    private var deliverySeconds = 0.0
    /// The last acknowledged frame: when the relay had it (relay clock, ms).
    private var lastArrival: Double?
    /// How long the last acknowledged frame queued behind others, smoothed (ms).
    public private(set) var queuingMilliseconds = 0.0
    private var lastBackoff = -Double.infinity
    private var lastUpdate: Double?
    /// Whether any acknowledgement came: without them (a relay before protocol 3) nothing is measured.
    public private(set) var isMeasuring = false

    public init(configuration: Configuration) {
        self.configuration = configuration
        targetKbps = configuration.maximumKbps
    }

    /// What the link was measured to deliver, kbit/s; nil before it is known.
    public var deliveryKbps: Int? {
        guard deliverySeconds > 0.05, deliveredBytes > 8_000 else { return nil }
        return Int(deliveredBytes * 8 / deliverySeconds / 1000)
    }

    /// A frame of `bytes` was handed to the connection at `now` (seconds, the publisher's monotonic clock).
    public mutating func sent(sequence: UInt64, bytes: Int, now: Double) {
        inFlight.append(Sent(sequence: sequence, bytes: bytes, at: now))
        bytesInFlight += bytes
        // An unanswered backlog (a relay that stopped acknowledging) must not grow this without bound.
        if inFlight.count > 4096 { forget(inFlight.removeFirst()) }
    }

    /// The relay acknowledged frame `sequence`, which it had whole at `receivedAt` (relay clock, ms). Returns
    /// whether ``targetKbps`` changed.
    @discardableResult
    public mutating func acknowledged(sequence: UInt64, receivedAt: Double, now: Double) -> Bool {
        // Acknowledgements come in order: frames before this one were acknowledged or lost with a connection.
        while let first = inFlight.first, first.sequence < sequence { forget(inFlight.removeFirst()) }
        guard let frame = inFlight.first, frame.sequence == sequence else { return false }
        forget(inFlight.removeFirst())
        isMeasuring = true
        let delay = receivedAt - frame.at * 1000
        delays.removeAll { now - $0.at > configuration.baseDelayWindowSeconds || $0.delay >= delay }
        delays.append((delay, now))
        let base = delays[0].delay
        // Its time on the way beyond the empty link's: waiting behind earlier frames, then its own transfer.
        let onTheWay = max(0, delay - base)
        var transfer: Double?
        if let lastArrival, frame.at * 1000 + base < lastArrival {
            // It would have arrived before the previous one was complete: it queued behind it, and the gap
            // between the two arrivals is the link carrying it.
            transfer = max(0, receivedAt - lastArrival)
        } else if onTheWay > 0 {
            transfer = onTheWay
        }
        if let transfer, transfer > 0 {
            let decay = 0.8
            deliveredBytes = deliveredBytes * decay + Double(frame.bytes)
            deliverySeconds = deliverySeconds * decay + transfer / 1000
        }
        lastArrival = max(lastArrival ?? receivedAt, receivedAt)
        let queued = max(0, onTheWay - (transfer ?? 0))
        queuingMilliseconds = 0.7 * queuingMilliseconds + 0.3 * queued
        return update(queued: queued, now: now)
    }

    /// Whether the next frame may be encoded now: what is in flight and `queuedBytes` waiting to be sent take
    /// less than the target delay at the delivery rate. Always true before the rate is known.
    public func admitsFrame(queuedBytes: Int, now: Double) -> Bool {
        guard let rate = deliveryKbps else { return true }
        let pending = Double(bytesInFlight + queuedBytes) * 8 / Double(rate)
        return pending <= configuration.targetDelayMilliseconds
    }

    /// A new connection: what was in flight on the old one will never be acknowledged. What was measured
    /// of the link stays.
    public mutating func connectionChanged() {
        inFlight.removeAll()
        bytesInFlight = 0
        delays.removeAll()
        lastArrival = nil
    }

    private mutating func forget(_ sent: Sent) {
        bytesInFlight -= sent.bytes
    }

    private mutating func update(queued: Double, now: Double) -> Bool {
        let before = targetKbps
        let elapsed = lastUpdate.map { min(1, max(0, now - $0)) } ?? 0
        lastUpdate = now
        let ceiling = min(configuration.maximumKbps, deliveryKbps ?? configuration.maximumKbps)
        if queued > configuration.targetDelayMilliseconds {
            // Backing off once per round of queuing: the frames already on the way were coded at the old rate.
            if now - lastBackoff >= 0.5 {
                let delivered = Double(deliveryKbps ?? targetKbps)
                targetKbps = Int(min(Double(targetKbps), delivered) * configuration.backoff)
                lastBackoff = now
            }
            reason = .backedOff(queuedMilliseconds: Int(queued))
        } else if now - lastBackoff >= configuration.holdAfterBackoffSeconds, queued < configuration.targetDelayMilliseconds / 2 {
            let climbed = Double(targetKbps) * (1 + configuration.probePerSecond * elapsed)
            targetKbps = Int(min(Double(ceiling), max(climbed, Double(targetKbps) + 1)))
            reason = targetKbps >= configuration.maximumKbps ? .atMaximum : targetKbps >= ceiling ? .linkLimited : .probing
        }
        targetKbps = max(configuration.minimumKbps, min(configuration.maximumKbps, targetKbps))
        return targetKbps != before
    }
}
