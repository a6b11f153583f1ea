/// Times what is written to an idle socket until the kernel holds none of it (``ScreenTransport/LinkSample``'s
/// pending bytes back to about nothing): the link carrying it, measured by the kernel's own acknowledgements, with
/// no relay and no frame queued ahead in between. Frames written before it drained join the same busy stretch, so
/// that the measure is bytes over a time the link was never idle. While it drains, what it delivered so far over
/// the time taken is a rate too: a link that narrowed shows in it before the frame is through. Pure: the caller
/// samples the socket and passes the time.
struct SocketDrainTimer: Sendable {
    /// The socket counts as idle holding at most this much: a packet's worth, for the sound frames sent beside.
    static var idleBytes: Int { 1500 }

    enum Reading: Sendable, Equatable {
        /// All of `bytes` were carried in `seconds`: the stretch is over.
        case drained(bytes: Int, seconds: Double)
        /// `deliveredBytes` of the stretch were carried in `seconds`, the rest is still held.
        case draining(deliveredBytes: Int, seconds: Double)
    }

    /// The busy stretch being timed: bytes written into it, since when.
    private var stretch: (bytes: Int, since: Double)?

    /// A stretch is being timed: the socket is worth sampling.
    var isTiming: Bool { stretch != nil }

    /// `bytes` are written at `now` to a socket that held `pendingBefore` (nil: it could not say); a stretch
    /// starts when it was idle, and one under way takes them in.
    mutating func writing(bytes: Int, pendingBefore: Int?, now: Double) {
        if let timed = stretch {
            let sum = timed.bytes.addingReportingOverflow(max(0, bytes))
            stretch = (sum.overflow ? .max : sum.partialValue, timed.since)
        } else if let pendingBefore, pendingBefore <= Self.idleBytes {
            stretch = (max(0, bytes), now)
        }
    }

    /// The socket held `pending` bytes at `now`; nil while no stretch is timed.
    mutating func sampled(pending: Int, now: Double) -> Reading? {
        guard let timed = stretch else { return nil }
        let seconds = max(0, now - timed.since)
        guard pending > Self.idleBytes else {
            stretch = nil
            return .drained(bytes: timed.bytes, seconds: seconds)
        }
        let delivered = timed.bytes.subtractingReportingOverflow(pending)
        return .draining(deliveredBytes: delivered.overflow ? 0 : max(0, delivered.partialValue), seconds: seconds)
    }

    /// A new connection: a stretch on the old one ends unmeasured.
    mutating func reset() { stretch = nil }
}
