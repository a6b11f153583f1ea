/// Times what is written to an idle socket until the kernel holds none of it (``ScreenTransport/LinkSample``'s
/// pending bytes back to about nothing): the link carrying it, measured by the kernel's own acknowledgements, with
/// no relay and no frame queued ahead in between. Frames written before it drained join the same busy stretch, so
/// that the measure is bytes over a time the link was never idle. While it drains, what it delivered so far over
/// the time taken is a rate too: a link that narrowed shows in it before the frame is through. Pure: the caller
/// samples the socket and passes the time.
///
/// The clock starts at the first sample that shows bytes acknowledged, not at the write, and what was acknowledged
/// by then is left out: an idle link's token bucket lets its first few kilobytes through at the line's rate (3 KB
/// of a 500 kbit/s `tbf`, tens of KB of a cable modem's), and their acknowledgements come back together a round trip
/// later. Counted, they made a 15 KB frame on 500 kbit/s drain "at 625 kbit/s", and a target at 0.9 of that sat
/// above the link. From the first acknowledgement on, what the sample sees is the bottleneck's own rate, and the
/// round trip is not counted either. It ends at the last sample that still saw bytes held: sampled every few
/// milliseconds, the one that sees the socket drained comes up to a sample's interval after it did, which on a
/// 0.2 s stretch took 2–5 % off the measure. A stretch that drained before any such sample is timed from its
/// write when it is larger than a thin link's bucket lets through at once (``drainedAtOnceBytes``): a fast link,
/// shown as such (on the relay's own machine, the acknowledgements of a relay busy for a moment can otherwise take
/// the target under `--bitrate`, and the viewers are sent refinements in parts); a smaller one says nothing.
struct SocketDrainTimer: Sendable {
    /// The socket counts as idle holding at most this much: a packet's worth, for the sound frames sent beside.
    static var idleBytes: Int { 1500 }
    /// A stretch of at least this much that drained before a sample saw it under way measures the link: more than
    /// a thin link's token bucket lets through at once with the packets behind it (`tbf`'s 20 ms of the rate, at
    /// least 3 KB: 4–8 KB at 0.5–2 Mbit/s).
    static var drainedAtOnceBytes: Int { 16_000 }

    enum Reading: Sendable, Equatable {
        /// `bytes` were carried in `seconds`, from the first sample that saw some acknowledged to the last that saw
        /// some held: the stretch is over.
        case drained(bytes: Int, seconds: Double)
        /// `deliveredBytes` were carried in `seconds` (since the first were acknowledged, or since the write while
        /// none is), the rest is still held.
        case draining(deliveredBytes: Int, seconds: Double)
    }

    /// Bytes acknowledged of a stretch by a sample's time.
    private typealias Acknowledged = (bytes: Int, at: Double)
    /// The busy stretch being timed: bytes written into it, since when; the first sample that showed some of them
    /// acknowledged, and the latest that still saw some held.
    private var stretch: (bytes: Int, since: Double, first: Acknowledged?, latest: Acknowledged?)?

    /// A stretch is being timed: the socket is worth sampling.
    var isTiming: Bool { stretch != nil }

    /// `bytes` are written at `now` to a socket that held `pendingBefore` (nil: it could not say); a stretch
    /// starts when it was idle, and one under way takes them in.
    mutating func writing(bytes: Int, pendingBefore: Int?, now: Double) {
        if let timed = stretch {
            let sum = timed.bytes.addingReportingOverflow(max(0, bytes))
            stretch?.bytes = sum.overflow ? .max : sum.partialValue
        } else if let pendingBefore, pendingBefore <= Self.idleBytes {
            stretch = (max(0, bytes), now, nil, nil)
        }
    }

    /// The socket held `pending` bytes at `now`; nil while no stretch is timed, and for a stretch under
    /// ``drainedAtOnceBytes`` that drained before a sample showed any of it acknowledged.
    mutating func sampled(pending: Int, now: Double) -> Reading? {
        guard let timed = stretch else { return nil }
        let difference = timed.bytes.subtractingReportingOverflow(max(0, pending))
        let delivered = difference.overflow ? 0 : max(0, difference.partialValue)
        guard let first = timed.first else {
            if pending <= Self.idleBytes {
                stretch = nil
                return delivered >= Self.drainedAtOnceBytes ? .drained(bytes: delivered, seconds: max(0, now - timed.since)) : nil
            }
            if delivered > 0 { stretch?.first = (delivered, now) }
            return .draining(deliveredBytes: 0, seconds: delivered > 0 ? 0 : max(0, now - timed.since))
        }
        guard pending > Self.idleBytes else {
            stretch = nil
            let latest = timed.latest ?? first
            return .drained(bytes: max(0, latest.bytes - first.bytes), seconds: max(0, latest.at - first.at))
        }
        stretch?.latest = (delivered, now)
        return .draining(deliveredBytes: max(0, delivered - first.bytes), seconds: max(0, now - first.at))
    }

    /// A new connection: a stretch on the old one ends unmeasured.
    mutating func reset() { stretch = nil }
}
