/// Follows the publisher's uplink from the relay's acknowledgements, as a pure state machine tested with made-up
/// times: what the link carries (its delivery rate), how long frames queue on the way, the encoder's target rate
/// and whether the next frame should wait.
///
/// Each frame is timed when it is handed to the connection; its acknowledgement says when the relay had all of
/// it, on the relay's clock, and is itself timed when it comes back. The relay clock's lead over ours is read off
/// the acknowledgements (the largest `receivedAt − now` of late: the way back is the link that is not loaded), so
/// a frame's time on the way up is `receivedAt − lead − sentAt`, to within the way back's shortest delay. A frame
/// that would have arrived before the one before it was complete queued behind it: the gap between their
/// arrivals is the link carrying it, and what it spent beyond that is queuing. A frame sent onto an idle link
/// spent its whole time on the way being carried. Bytes over carrying time give the delivery rate, measured even
/// when the encoder sends less than the link could carry. Frames sent onto an idle link also measure, with it, what
/// an idle link does to any frame: a token bucket lets its first bytes through at the line's rate (a 25 KB frame on
/// 500 kbit/s with a 3 KB bucket seemed 14 % faster than the link), a long way adds its delay; the slope of their
/// time against their size (``IdleLinkFit``) has neither, and the delivery rate is never taken above it. Over a
/// socket of its own, the publisher also times what it writes to an idle socket until the kernel holds none of it
/// (``socketDrained(bytes:seconds:)``, ``socketDraining(deliveredBytes:seconds:)``): the same measure without the
/// relay in between, and one that shows a link that narrowed while a frame is still on its way.
///
/// The target (``UplinkTarget``) backs off multiplicatively (to ``Configuration/backoff`` of what was delivered)
/// when frames queue longer than ``Configuration/targetDelayMilliseconds`` behind others, probes upwards gently
/// (``Configuration/probePerSecond``) once they have not for a while, stays under ``Configuration/linkShare`` of
/// what the link delivers (``UplinkDeliveryRate``), and never goes above ``Configuration/maximumKbps``
/// (`--bitrate`) or below ``Configuration/minimumKbps``. While two frames are on their way, or the link is still
/// busy with one for more than half the target delay, the next frame waits (``framesWaitUntil(queuedBytes:)``):
/// the capture side skips it before encoding and codes its changes with the next one.
public struct UplinkController: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// The configured bit rate (`--bitrate`): never exceeded.
        public var maximumKbps: Int
        /// The lowest target: below it frames are skipped rather than coded worse.
        public var minimumKbps: Int
        /// How long frames may queue behind others before the target backs off; half of it is how long the link
        /// may still be busy with what is in flight before the next frame waits.
        public var targetDelayMilliseconds: Double
        /// After backing off, the share of the delivery rate the target goes to.
        public var backoff: Double
        /// How fast the target climbs while nothing queues, per second (a share of itself).
        public var probePerSecond: Double
        /// The share of the measured delivery rate the target stays under (room for sound and for frames larger
        /// than the average).
        public var linkShare: Double
        /// Seconds without queuing before the target climbs after a back-off.
        public var holdAfterBackoffSeconds: Double
        public var clockLeadWindowSeconds: Double
        public var lostAfterSeconds: Double

        public init(
            maximumKbps: Int, minimumKbps: Int = 100, targetDelayMilliseconds: Double = 150, backoff: Double = 0.85,
            probePerSecond: Double = 0.08, linkShare: Double = 0.9, holdAfterBackoffSeconds: Double = 1,
            clockLeadWindowSeconds: Double = 10, lostAfterSeconds: Double = 10
        ) {
            self.linkShare = linkShare
            self.lostAfterSeconds = lostAfterSeconds
            self.maximumKbps = max(1, maximumKbps)
            self.minimumKbps = min(minimumKbps, self.maximumKbps)
            self.targetDelayMilliseconds = targetDelayMilliseconds
            self.backoff = backoff
            self.probePerSecond = probePerSecond
            self.holdAfterBackoffSeconds = holdAfterBackoffSeconds
            self.clockLeadWindowSeconds = clockLeadWindowSeconds
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
        /// The receiver reports losing this share of the packets (WHIP): backed off.
        case lossy(percent: Int)

        public var description: String {
            switch self {
            case .configured: "the configured --bitrate (no measurement of the uplink yet)"
            case .backedOff(let queued): "backed off: frames queued \(queued) ms on the uplink"
            case .probing: "probing upwards: the uplink carries the current rate without queuing"
            case .linkLimited: "what the uplink was measured to deliver"
            case .atMaximum: "the configured --bitrate, which the uplink carries"
            case .lossy(let percent): "backed off: the receiver reports \(percent) % of packets lost"
            }
        }
    }

    private struct Sent {
        var sequence: UInt64
        var bytes: Int
        /// Publisher's clock, seconds.
        var at: Double
    }

    /// An unanswered backlog (a relay that stopped acknowledging) is forgotten past this many frames.
    static var mostFramesInFlight: Int { 4096 }

    public let configuration: Configuration
    private var target: UplinkTarget
    public var targetKbps: Int { target.kbps }
    public var reason: Reason { target.reason }
    /// Frames sent and not yet acknowledged, oldest first.
    private var inFlight: [Sent] = []
    /// The relay clock's lead over ours as recent acknowledgements show it (`receivedAt − now`, ms): the largest
    /// of late, the way back being the link that is not loaded.
    private var relayLead: WindowedExtremum
    private var delivery = UplinkDeliveryRate()
    /// The last acknowledged frame: when the relay had it (relay clock, ms).
    private var lastArrival: Double?
    /// When the last frame was handed to the connection.
    private var lastSentAt = -Double.infinity
    /// Receiver reports (WHIP): the shortest recent round trip, and the bytes sent at the last report.
    private var shortestRoundTrip: WindowedExtremum
    private var lastReport: (bytesSent: UInt64, at: Double)?

    public init(configuration: Configuration) {
        self.configuration = configuration
        target = UplinkTarget(configuration: configuration)
        relayLead = WindowedExtremum(.maximum, window: configuration.clockLeadWindowSeconds)
        shortestRoundTrip = WindowedExtremum(.minimum, window: configuration.clockLeadWindowSeconds)
    }

    /// What the link was measured to deliver, kbit/s; nil before it is known.
    public var deliveryKbps: Int? { delivery.kbps }

    /// A frame of `bytes` was handed to the connection at `now` (seconds, the publisher's monotonic clock).
    public mutating func sent(sequence: UInt64, bytes: Int, now: Double) {
        if let oldest = inFlight.first, now - oldest.at > configuration.lostAfterSeconds {
            // Let through by a link silent for that long (``framesWaitUntil(queuedBytes:)``).
            target.halveAfterSilence(now - oldest.at)
        }
        lastSentAt = now
        inFlight.append(Sent(sequence: sequence, bytes: bytes, at: now))
        if inFlight.count > Self.mostFramesInFlight { inFlight.removeFirst() }
    }

    /// The relay acknowledged frame `sequence`, which it had whole at `receivedAt` (relay clock, ms). Returns
    /// whether ``targetKbps`` changed.
    @discardableResult
    public mutating func acknowledged(sequence: UInt64, receivedAt: Double, now: Double) -> Bool {
        guard receivedAt.isFinite else { return false }
        // Acknowledgements come in order: frames before this one were acknowledged or lost with a connection.
        while let first = inFlight.first, first.sequence < sequence { inFlight.removeFirst() }
        guard let frame = inFlight.first, frame.sequence == sequence else { return false }
        inFlight.removeFirst()
        let lead = relayLead.add(receivedAt - now * 1000, now: now)
        // Its time on the way up: waiting behind earlier frames, then being carried.
        let onTheWay = max(0, receivedAt - lead - frame.at * 1000)
        let transfer: Double
        let queuedBehind = lastArrival.map { frame.at * 1000 + lead < $0 } ?? false
        if queuedBehind, let lastArrival {
            // It would have arrived before the previous one was complete: it queued behind it, and the gap
            // between the two arrivals is the link carrying it.
            transfer = min(onTheWay, max(0, receivedAt - lastArrival))
        } else {
            transfer = onTheWay
        }
        delivery.add(bytes: frame.bytes, milliseconds: transfer, ontoIdleLink: !queuedBehind)
        lastArrival = max(lastArrival ?? receivedAt, receivedAt)
        return target.afterAcknowledgement(queued: onTheWay - transfer, deliveryKbps: delivery.kbps, now: now)
    }

    /// The socket held none of what was written to it idle `seconds` ago, `bytes` in all (``SocketDrainTimer``):
    /// the link carried them in that time, as the kernel's acknowledgements tell, without waiting for the relay's.
    /// A link that narrowed lowers the target at once. Returns whether ``targetKbps`` changed.
    @discardableResult
    public mutating func socketDrained(bytes: Int, seconds: Double) -> Bool {
        guard seconds.isFinite, seconds > 0 else { return false }
        delivery.add(bytes: bytes, milliseconds: seconds * 1000, ontoIdleLink: true)
        return target.underLink(deliveryKbps: delivery.kbps)
    }

    /// The socket, timed since it was idle `seconds` ago, has carried `deliveredBytes` and still holds the rest: when
    /// that is well under the delivery rate (a link that narrowed under a frame), it counts as a measure now, before
    /// the frame is through. The caller asks again ``shortestDrainingMeasure`` after it counted, so that a link that
    /// fell far comes down in a few steps. Returns whether it counted.
    public mutating func socketDraining(deliveredBytes: Int, seconds: Double) -> Bool {
        guard seconds >= Self.shortestDrainingMeasure, seconds.isFinite, let kbps = delivery.kbps else { return false }
        let soFarKbps = Double(deliveredBytes) * 8 / seconds / 1000
        guard soFarKbps < UplinkDeliveryRate.narrowedBelow * Double(kbps) else { return false }
        delivery.add(bytes: deliveredBytes, milliseconds: seconds * 1000, ontoIdleLink: false)
        _ = target.underLink(deliveryKbps: delivery.kbps)
        return true
    }

    /// A frame's stretch under way is judged from this long: before, a few packets' timing says little.
    static var shortestDrainingMeasure: Double { 0.1 }

    /// From when the next frame may be encoded, seconds on the publisher's clock; minus infinity when at once:
    /// once at most one frame is on its way, and the link, carrying it from when it was handed over at the
    /// delivery rate and then `queuedBytes` waiting to be sent, is busy for less than half the target delay.
    /// Counting what is left to carry (not waiting for the acknowledgement) lets the next page go while the last
    /// one is finishing, which is what keeps a thin link used; half the delay leaves the other half to the
    /// measurement's error before frames queue long enough to back off. At once before the rate is known. While
    /// the oldest frame on its way has gone unacknowledged for ``Configuration/lostAfterSeconds`` (a connection
    /// stuck recovering from losses, a relay that stopped answering), one frame goes per that while, at half the
    /// target each time.
    public func framesWaitUntil(queuedBytes: Int) -> Double {
        guard let rate = deliveryKbps, rate > 0 else { return -.infinity }
        func carrying(_ bytes: Int) -> Double { Double(bytes) * 8 / Double(rate) / 1000 }
        var linkFreeAt = -Double.infinity
        for frame in inFlight { linkFreeAt = max(linkFreeAt, frame.at) + carrying(frame.bytes) }
        let allowance = configuration.targetDelayMilliseconds / 2000
        // One frame on its way at most when the next goes: a link that narrowed since it was measured queues one
        // frame behind another, not a run of them, before acknowledgements show it.
        var waitUntil = inFlight.count > 1 || carrying(queuedBytes) > allowance
            ? Double.infinity : linkFreeAt + carrying(queuedBytes) - allowance
        // A link silent for lostAfterSeconds (no acknowledgement of the oldest frame on its way) takes one frame
        // per such while, each coded at half the rate of the one before (``sent(sequence:bytes:now:)``).
        if let oldest = inFlight.first { waitUntil = min(waitUntil, max(oldest.at, lastSentAt) + configuration.lostAfterSeconds) }
        return waitUntil
    }

    /// What a receiver's RTCP reports say (WHIP, about once a second, through webrtcbin's statistics): the share of
    /// packets lost since the previous report, the round trip, and the bytes sent so far (``UplinkTarget``:
    /// loss-based as GCC's sender side; a round trip grown past the target delay over its minimum backs off as
    /// for acknowledgements). Returns whether ``targetKbps`` changed. What reports cannot show: when each frame
    /// arrived (no per-packet feedback), so frames are never held back on them, and queuing shows only once a
    /// second, both ways summed.
    @discardableResult
    public mutating func receiverReport(fractionLost: Double, roundTripMilliseconds: Double?, bytesSent: UInt64, now: Double) -> Bool {
        var sendingKbps: Double?
        if let last = lastReport, now > last.at, bytesSent >= last.bytesSent {
            sendingKbps = Double(bytesSent - last.bytesSent) * 8 / (now - last.at) / 1000
        }
        lastReport = (bytesSent, now)
        var queued = 0.0
        if let rtt = roundTripMilliseconds, rtt >= 0, rtt.isFinite {
            queued = rtt - shortestRoundTrip.add(rtt, now: now)
        }
        return target.afterReceiverReport(fractionLost: fractionLost, queued: queued, sendingKbps: sendingKbps, now: now)
    }

    /// A new connection: what was in flight on the old one will never be acknowledged. What was measured of the
    /// link stays.
    public mutating func connectionChanged() {
        inFlight.removeAll()
        relayLead.removeAll()
        lastArrival = nil
    }
}
