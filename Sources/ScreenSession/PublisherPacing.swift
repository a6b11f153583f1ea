/// What the uplink allows a relay publisher's capture side, as a pure state machine: the encoder's target rate
/// and until when frames wait, from the ``UplinkController`` fed with the relay's acknowledgements (protocol 3),
/// and when to tell the relay what the uplink does (`uplink`, at most every ``reportIntervalSeconds``, when it
/// changed). Without acknowledgements it holds frames only while one is queued already.
struct PublisherPacing: Sendable {
    /// The uplink is reported to the relay at most this often.
    static var reportIntervalSeconds: Double { 2 }

    private(set) var uplink: UplinkController?
    /// The relay of the current connection acknowledges frames, and the uplink is followed.
    private(set) var measures = false
    /// The uplink as last reported to the relay, and when.
    private var reported: (target: Int, estimate: Int?, at: Double)?

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
        uplink?.connectionChanged()
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
