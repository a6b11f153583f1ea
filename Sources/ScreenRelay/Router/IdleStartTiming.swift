/// How fast a subscriber's link carries what it is sent from an idle start: each run of frames sent to an idle
/// connection is timed until the kernel holds none of it (`TCP_INFO`'s pending bytes, with nothing left in the
/// relay's queue). TCP starts again from a small window after an idle gap, so this is below the kernel's delivery
/// rate, which is measured only while data queues — and it is measured even when the link is rarely busy.
struct IdleStartTiming {
    /// Since when the link has been carrying the current run, and its bytes.
    private var busySince: (at: Double, bytes: Int)?
    /// The runs' rate, bytes a second, smoothed; nil before one long enough to tell has ended.
    private(set) var rate: Double?

    /// A run is being timed.
    var isTiming: Bool { busySince != nil }

    /// `bytes` were sent at `now`: they start a run if none is being timed, else join it.
    mutating func sent(_ bytes: Int, now: Double) {
        if busySince == nil { busySince = (now, 0) }
        busySince?.bytes += bytes
    }

    /// The link was measured busy at `bytesPerSecond`: a run from an idle start is no faster than that.
    mutating func cap(at bytesPerSecond: Double) {
        if let current = rate, bytesPerSecond < current { rate = bytesPerSecond }
    }

    /// The kernel holds `pendingBytes` of the connection's data at `now`; `queueEmpty`: the relay holds none.
    /// With neither, the run is over: its rate, when it was long enough to tell.
    mutating func measured(pendingBytes: Int, queueEmpty: Bool, now: Double) {
        guard let busy = busySince, pendingBytes == 0, queueEmpty else { return }
        let seconds = now - busy.at
        if seconds >= 0.05, busy.bytes >= 4096 {
            let sample = Double(busy.bytes) / seconds
            rate = rate.map { 0.5 * $0 + 0.5 * sample } ?? sample
        }
        busySince = nil
    }
}
