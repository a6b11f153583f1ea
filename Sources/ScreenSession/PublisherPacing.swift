/// What the uplink allows a relay publisher's capture side, as a pure state machine: the encoder's target rate
/// and until when frames wait, from the ``UplinkController`` fed with the relay's acknowledgements (protocol 3)
/// and with its own socket's drain times (``SocketDrainTimer``), the rate that socket is paced at
/// (``socketPacingDue()``), and when to tell the relay what the uplink does (`uplink`, at most every
/// ``reportIntervalSeconds``, when it changed). Without acknowledgements it holds frames only while one is queued
/// already, and leaves the socket unpaced.
struct PublisherPacing: Sendable {
    /// The uplink is reported to the relay at most this often.
    static var reportIntervalSeconds: Double { 2 }
    /// The socket is paced this far above the target, or above what the link was measured to deliver when that is
    /// more (it is, but for the configured rate before any measure: the target stays under 0.9 of it). A frame then
    /// enters the link's bottleneck at most a quarter faster than it drains there: a 60 KB page leaves some 12 KB in
    /// its queue, where unpaced it would have been the whole page, and a short queue drops it. Never on the target
    /// alone: what a paced socket delivers is the pacing, and a target backed off far below the link measured a
    /// link that slow, and stayed there (a link back at 2 Mbit/s carried 120 kbit/s for 20 s). Above the measure,
    /// the measure can always show a link wider than itself, as the relay's subscribers' pacing does (1.25 too).
    static var socketHeadroom: Double { 1.25 }

    private(set) var uplink: UplinkController?
    /// The relay of the current connection acknowledges frames, and the uplink is followed.
    private(set) var measures = false
    /// The uplink as last reported to the relay, and when.
    private var reported: (target: Int, estimate: Int?, at: Double)?
    private var drain = SocketDrainTimer()
    /// When the stretch being timed last counted as a measure while it drained.
    private var drainingCountedAt: Double?
    /// The rate the socket was last paced at, bytes a second; nil: unpaced.
    private var socketPacing: Double?

    init(uplink: UplinkController.Configuration?) {
        self.uplink = uplink.map(UplinkController.init)
    }

    /// A connection was welcomed; `acknowledges`: its relay acknowledges frames (protocol 3).
    mutating func connected(acknowledges: Bool) {
        measures = acknowledges && uplink != nil
    }

    /// A new connection is being made: nothing in flight will be acknowledged.
    mutating func connectionChanged() {
        measures = false
        reported = nil
        drain.reset()
        socketPacing = nil
        uplink?.connectionChanged()
    }

    /// `bytes` are written to the socket at `now`, which held `pendingBefore` (nil: not asked, as for sound).
    mutating func writing(bytes: Int, pendingBefore: Int?, now: Double) {
        guard measures else { return }
        if !drain.isTiming { drainingCountedAt = nil }
        drain.writing(bytes: bytes, pendingBefore: pendingBefore, now: now)
    }

    /// A stretch written to an idle socket is being timed: the socket is worth sampling.
    var timesSocket: Bool { measures && drain.isTiming }

    /// The socket held `pending` bytes at `now`: whether the target changed.
    mutating func socketSampled(pending: Int, now: Double) -> Bool {
        guard measures, let reading = drain.sampled(pending: pending, now: now) else { return false }
        switch reading {
        case .drained(let bytes, let seconds):
            return uplink?.socketDrained(bytes: bytes, seconds: seconds) ?? false
        case .draining(let delivered, let seconds)
            where drainingCountedAt.map { now - $0 >= UplinkController.shortestDrainingMeasure } ?? true:
            let before = uplink?.targetKbps
            if uplink?.socketDraining(deliveredBytes: delivered, seconds: seconds) == true { drainingCountedAt = now }
            return uplink?.targetKbps != before
        case .draining:
            return false
        }
    }

    /// The rate to pace the socket at now (bytes a second), when it moved by a tenth from the one set: the target
    /// or the link's measure if more, with ``socketHeadroom``; nil when nothing is to change. Noted as set.
    mutating func socketPacingDue() -> Double? {
        guard measures, let uplink else { return nil }
        let wanted = Double(max(uplink.targetKbps, uplink.deliveryKbps ?? 0)) * 1000 / 8 * Self.socketHeadroom
        if let applied = socketPacing, abs(wanted - applied) < 0.1 * applied { return nil }
        socketPacing = wanted
        return wanted
    }

    /// Frame `sequence` of `bytes` was handed to the connection at `now`.
    mutating func sent(sequence: UInt64, bytes: Int, now: Double) {
        guard measures else { return }
        uplink?.sent(sequence: sequence, bytes: bytes, now: now)
    }

    /// The relay acknowledged frame `sequence`: whether the target changed.
    mutating func acknowledged(sequence: UInt64, receivedAt: Double, now: Double) -> Bool {
        guard measures else { return false }
        return uplink?.acknowledged(sequence: sequence, receivedAt: receivedAt, now: now) ?? false
    }

    /// What the capture side is told with `queuedFrames` frames of `queuedBytes` waiting to be sent: the target
    /// (nil: the configured rate stands) and until when frames wait, seconds on the publisher's clock — always
    /// while one is queued already, else until the link has nearly carried what is in flight
    /// (``UplinkController/framesWaitUntil(queuedBytes:)``).
    func advice(queuedFrames: Int, queuedBytes: Int) -> (targetKbps: Int?, holdUntil: Double) {
        let waitUntil = queuedFrames >= 1 ? Double.infinity : uplink?.framesWaitUntil(queuedBytes: queuedBytes) ?? -.infinity
        return (uplink?.targetKbps, waitUntil)
    }

    /// The uplink to report to the relay now, if any: when it changed, at most every ``reportIntervalSeconds``.
    mutating func reportDue(now: Double) -> (target: Int, estimate: Int?)? {
        guard measures, let uplink else { return nil }
        let current = (target: uplink.targetKbps, estimate: uplink.deliveryKbps)
        if let last = reported, (last.target == current.target && last.estimate == current.estimate) || now - last.at < Self.reportIntervalSeconds {
            return nil
        }
        reported = (current.target, current.estimate, now)
        return current
    }

    /// The target, the uplink's measure and why, for `screenpub status` (nil without a controller); `connected`:
    /// the publisher is connected now (a relay that does not acknowledge leaves the configured rate).
    func status(connected: Bool) -> (targetKbps: Int, uplinkKbps: Int?, reason: String)? {
        guard let uplink else { return nil }
        let reason = measures || !connected
            ? uplink.reason.description : "the configured --bitrate (the relay does not acknowledge frames: it predates protocol 3)"
        return (uplink.targetKbps, uplink.deliveryKbps, reason)
    }
}
