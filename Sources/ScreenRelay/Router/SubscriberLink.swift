/// What the router knows of one subscriber's link: the frames queued for it, how fast it drains them — the gaps
/// between deliveries of frames that waited, or the kernel's own measure (`TCP_INFO`) — and how fast it carries a
/// run of frames from an idle start (``IdleStartTiming``). Pure: the router tells it what was sent and delivered
/// and what the kernel said, with the time.
struct SubscriberLink {
    /// One video frame on its way to the subscriber.
    struct InFlight {
        var bytes: Int
        var queuedAt: Double
        /// Above the subscriber's layers, sent because its link had room.
        var fittedIn: Bool
    }

    /// Each earlier delivery counts this much less in the drain rate at each new one: the rate follows the link.
    static var deliveryDecay: Double { 0.85 }
    /// The weight of a new kernel measure in the smoothed one (about three samples, 1.5 s, to follow a widening).
    static var kernelSampleWeight: Double { 0.3 }
    /// The weight of a measure below the smoothed one: a link that narrowed shows within two samples (a second).
    /// Followed at the rising weight, a link narrowed to a quarter read twice its rate for 2 s, and the frames sent
    /// meanwhile, unpaced and unthinned, filled its bottleneck's queue for seconds more; at 0.7, a single low
    /// measure lowered the pacing under the link.
    static var kernelFallWeight: Double { 0.5 }
    /// A measure counts at most this many times the smoothed one: a burst through a token bucket at the line's
    /// rate once read 25 times the link.
    static var largestRise: Double { 2 }
    /// How much the lowest recent kernel measure climbs at each sample, so that a link that widened shows it.
    static var lowestMeasureClimb: Double { 1.02 }
    /// Deliveries tell a rate only past this much (a few small frames say more of the buffers than of the link).
    static var minimumDrainSeconds: Double { 0.02 }
    static var minimumDrainBytes: Double { 4096 }

    private(set) var inFlight = FIFO<InFlight>()
    private(set) var queuedBytes = 0
    /// Of ``queuedBytes``, those of frames fitted in above its layers.
    private(set) var fittedInBytes = 0
    /// Its drain rate from deliveries: bytes and busy seconds, both decaying, so that their ratio follows the link.
    private var drainedBytes = 0.0
    private var drainSeconds = 0.0
    private(set) var lastDeliveryAt: Double
    /// Since when it has taken nothing of a non-empty queue.
    private(set) var stalledSince: Double?
    /// Since when its connection has taken nothing of an earlier subscription's frames: its stall counts from then
    /// (until it takes a frame).
    private var carriedStall: Double?
    /// The kernel's delivery rate, smoothed.
    private(set) var kernelRate: Double?
    /// The lowest of the kernel's recent measures, climbing ``lowestMeasureClimb`` a sample: what a layer's return
    /// is judged by. Single measures run high on a link whose queue lets bursts through at the line's rate (a
    /// token bucket), and a layer that only the high ones would carry fills the queue for seconds before it goes.
    private(set) var kernelRateLow: Double?
    /// Bytes written but not yet acknowledged by the peer: in the network's queues, below the relay's.
    private(set) var hiddenBytes = 0
    private(set) var idleStart = IdleStartTiming()

    init(now: Double) { lastDeliveryAt = now }

    /// Its connection took nothing of an earlier subscription's frames since `since`.
    mutating func carryStall(since: Double) { carriedStall = since }

    /// Bytes per second it has been taking frames at: the kernel's measure when there is one, else the gaps
    /// between deliveries; nil before either can tell.
    var drainRate: Double? {
        kernelRate ?? (drainSeconds > Self.minimumDrainSeconds && drainedBytes > Self.minimumDrainBytes ? drainedBytes / drainSeconds : nil)
    }

    /// What a frame's fitting in is judged by: how fast it carried frames from an idle start (what a frame sent
    /// now, after a gap, will take), else the lowest recent kernel measure, else the drain rate.
    var fitRate: Double? { idleStart.rate ?? kernelRateLow ?? drainRate }

    /// What it has shown it carries, for a layer's return: the higher of the lowest recent kernel measure and the
    /// rate from an idle start. A link that widened past the stream's rate is rarely busy enough for the kernel to
    /// measure it (its samples are limited by what the relay has to send), while frames from an idle start show it.
    var shownRate: Double? { [kernelRateLow, idleStart.rate].compactMap { $0 }.max() }

    /// A frame of `bytes` was queued for it.
    mutating func sent(_ bytes: Int, fittedIn: Bool, now: Double) {
        if inFlight.isEmpty { stalledSince = carriedStall ?? now }
        idleStart.sent(bytes, now: now)
        inFlight.append(InFlight(bytes: bytes, queuedAt: now, fittedIn: fittedIn))
        queuedBytes += bytes
        if fittedIn { fittedInBytes += bytes }
    }

    /// The oldest frame queued for it was written out; false when none was queued.
    mutating func delivered(now: Double) -> Bool {
        guard let sent = inFlight.popFirst() else { return false }
        queuedBytes -= sent.bytes
        if sent.fittedIn { fittedInBytes -= sent.bytes }
        // Only a frame that waited behind the previous one measures the link: the gap between their deliveries is
        // the link carrying it. (A frame written to an idle connection is reported as soon as the socket and
        // channel buffers take it, long before it has left on a thin link.)
        let busy = sent.queuedAt < lastDeliveryAt ? now - lastDeliveryAt : 0
        if busy > 0 {
            drainedBytes = drainedBytes * Self.deliveryDecay + Double(sent.bytes)
            drainSeconds = drainSeconds * Self.deliveryDecay + busy
        }
        lastDeliveryAt = now
        carriedStall = nil
        stalledSince = inFlight.isEmpty ? nil : now
        return true
    }

    /// What the kernel says of the connection: its delivery rate when it had enough to send to measure it (nil:
    /// not measured, or not asked), and the bytes it holds below the relay's queue.
    mutating func measured(deliveryBytesPerSecond rate: Double?, pendingBytes: Int, now: Double) {
        if let rate, rate > 0, rate.isFinite {
            kernelRate = kernelRate.map { smoothed in
                let weight = rate < smoothed ? Self.kernelFallWeight : Self.kernelSampleWeight
                return (1 - weight) * smoothed + weight * min(rate, Self.largestRise * smoothed)
            } ?? rate
            kernelRateLow = min(rate, kernelRateLow.map { $0 * Self.lowestMeasureClimb } ?? rate)
            // The link measured busy: a run from an idle start goes no faster (what it showed before a narrowing is
            // past, and would fit frames in that the link no longer has room for).
            if let kernelRate { idleStart.cap(at: kernelRate) }
        }
        hiddenBytes = max(0, pendingBytes)
        idleStart.measured(pendingBytes: hiddenBytes, queueEmpty: inFlight.isEmpty, now: now)
    }

    /// How long what is queued for it will take, in milliseconds: its bytes at the drain rate, less what the link
    /// has done of the first since it began on it, plus however much longer than expected that has taken (a link
    /// that stopped), plus what the kernel holds. Before the rate is known, how long the first has waited.
    func queuedMilliseconds(now: Double) -> Double {
        let below = drainRate.map { Double(hiddenBytes) / $0 * 1000 } ?? 0
        guard let head = inFlight.first else { return below }
        let onHead = now - max(head.queuedAt, lastDeliveryAt)
        guard let rate = drainRate else { return (now - head.queuedAt) * 1000 }
        let remaining = max(0, Double(queuedBytes) / rate - onHead)
        let overrun = max(0, onHead - Double(head.bytes) / rate)
        return (remaining + overrun) * 1000 + below
    }

    /// ``queuedMilliseconds(now:)`` less the frames fitted in above its layers: what its layers are judged by
    /// (those frames only go where there is room, and must not take its layers' place).
    func layersMilliseconds(queued: Double) -> Double {
        guard fittedInBytes > 0, let rate = drainRate else { return queued }
        return max(0, queued - Double(fittedInBytes) / rate * 1000)
    }

    /// How long, at the fit rate, a frame of `bytes` sent now would take to be done with, behind `queued`
    /// milliseconds; nil before the link has been measured.
    func millisecondsToCarry(_ bytes: Int, behind queued: Double) -> Double? {
        guard let rate = fitRate, rate > 0 else { return nil }
        return queued + Double(bytes) / rate * 1000
    }

    /// It has taken nothing of what is queued for it for `seconds`.
    func hasStalled(now: Double, for seconds: Double) -> Bool {
        stalledSince.map { now - $0 >= seconds } ?? false
    }
}
