/// The encoder's target rate and why, driven either by the relay's acknowledgements (``afterAcknowledgement``:
/// how long frames queued on the way, what the link delivers) or by a WHIP receiver's RTCP reports
/// (``afterReceiverReport``: loss and round trip). Either backs off multiplicatively when frames queue past the
/// target delay (WebRTC's delay-based estimation, GCC, does the same on packets), at most once per round
/// (``BackoffThrottle``), and probes upwards gently once they have not for a while; it never goes above
/// ``UplinkController/Configuration/maximumKbps`` or below ``UplinkController/Configuration/minimumKbps``.
/// Pure: the caller passes the time.
struct UplinkTarget: Sendable {
    /// More than this share of packets lost backs off by half the loss; under ``climbsBelowLoss`` the target climbs.
    static var backsOffAboveLoss: Double { 0.1 }
    static var climbsBelowLoss: Double { 0.02 }

    let configuration: UplinkController.Configuration
    private(set) var kbps: Int
    private(set) var reason = UplinkController.Reason.configured
    private var throttle = BackoffThrottle()
    private var lastUpdate: Double?

    init(configuration: UplinkController.Configuration) {
        self.configuration = configuration
        kbps = configuration.maximumKbps
    }

    /// An acknowledged frame queued `queued` ms behind others on a link measured at `deliveryKbps`: backs off past
    /// the target delay; climbs while under half of it, under ``UplinkController/Configuration/linkShare`` of what
    /// the link delivers; never stays above that share. Returns whether the target changed.
    mutating func afterAcknowledgement(queued: Double, deliveryKbps: Int?, now: Double) -> Bool {
        let before = kbps
        let elapsed = secondsSinceUpdate(now: now)
        let ceiling = min(configuration.maximumKbps, deliveryKbps.map { Int(Double($0) * configuration.linkShare) } ?? configuration.maximumKbps)
        if queued > configuration.targetDelayMilliseconds {
            if throttle.backOff(now: now) { kbps = Int(min(Double(kbps), Double(deliveryKbps ?? kbps)) * configuration.backoff) }
            reason = .backedOff(queuedMilliseconds: Self.wholeMilliseconds(queued))
        } else if throttle.sinceBackoff(now: now) >= configuration.holdAfterBackoffSeconds, queued < configuration.targetDelayMilliseconds / 2 {
            kbps = Int(min(Double(ceiling), climbed(elapsed)))
            reason = kbps >= configuration.maximumKbps ? .atMaximum : kbps >= ceiling ? .linkLimited : .probing
        } else if kbps > ceiling {
            // Never above what the link delivers, whatever else holds.
            kbps = ceiling
            reason = .linkLimited
        }
        return bounded(before)
    }

    /// What the socket says the link delivers, `deliveryKbps`: the target goes down to
    /// ``UplinkController/Configuration/linkShare`` of it when above, and never up on it. Returns whether it changed.
    mutating func underLink(deliveryKbps: Int?) -> Bool {
        guard let deliveryKbps else { return false }
        let before = kbps
        let ceiling = Int(Double(deliveryKbps) * configuration.linkShare)
        if kbps > ceiling {
            kbps = ceiling
            reason = .linkLimited
        }
        return bounded(before)
    }

    /// A receiver's report: `fractionLost` of the packets since the last one, frames `queued` ms longer on the way
    /// than the shortest round trip of late, sending at `sendingKbps`. Returns whether the target changed.
    mutating func afterReceiverReport(fractionLost: Double, queued: Double, sendingKbps: Double?, now: Double) -> Bool {
        let before = kbps
        let elapsed = secondsSinceUpdate(now: now)
        // A share, whatever the report says.
        let fractionLost = fractionLost.isFinite ? min(1, max(0, fractionLost)) : 0
        if fractionLost > Self.backsOffAboveLoss {
            if throttle.backOff(now: now) { kbps = Int(Double(kbps) * (1 - 0.5 * fractionLost)) }
            reason = .lossy(percent: Int((fractionLost * 100).rounded()))
        } else if queued > configuration.targetDelayMilliseconds {
            if throttle.backOff(now: now) { kbps = Int(min(Double(kbps), sendingKbps ?? Double(kbps)) * configuration.backoff) }
            reason = .backedOff(queuedMilliseconds: Self.wholeMilliseconds(queued))
        } else if fractionLost < Self.climbsBelowLoss, throttle.sinceBackoff(now: now) >= configuration.holdAfterBackoffSeconds {
            kbps = Int(climbed(elapsed))
            reason = kbps >= configuration.maximumKbps ? .atMaximum : .probing
        }
        return bounded(before)
    }

    /// The link was silent for `silentSeconds` with a frame on its way: what it carries when it comes back is
    /// unknown, and it may be stuck recovering from losses; code small meanwhile.
    mutating func halveAfterSilence(_ silentSeconds: Double) {
        kbps = max(configuration.minimumKbps, kbps / 2)
        reason = .backedOff(queuedMilliseconds: Self.wholeMilliseconds(silentSeconds * 1000))
    }

    /// Milliseconds as a whole number that cannot trap (not a number, or beyond a day, says nothing more).
    private static func wholeMilliseconds(_ value: Double) -> Int {
        value.isFinite ? Int(min(max(value, 0), 86_400_000)) : 0
    }

    /// The target a second's probing reaches from here, at least one kbit/s more.
    private func climbed(_ elapsed: Double) -> Double {
        max(Double(kbps) * (1 + configuration.probePerSecond * elapsed), Double(kbps) + 1)
    }

    private mutating func secondsSinceUpdate(now: Double) -> Double {
        defer { lastUpdate = now }
        return lastUpdate.map { min(1, max(0, now - $0)) } ?? 0
    }

    private mutating func bounded(_ before: Int) -> Bool {
        kbps = max(configuration.minimumKbps, min(configuration.maximumKbps, kbps))
        return kbps != before
    }
}
