/// Whether the machine keeps up with encoding, as a pure state machine tested with made-up times: told how long
/// each encode took, it says when to code fewer frames (the machine is overloaded: encoding takes most of the
/// time it has) and when to code them all again (the load has passed). libwebrtc's CPU-overuse detector does
/// the same with the frame rate and resolution; screenpub lowers the frame rate only: text stays sharp.
///
/// With a ``stride`` of n, one changed frame in n is coded; the others are skipped before encoding, their
/// changes coded with the next one, so nothing that changed is lost, it only arrives later.
struct EncodeLoad {
    /// The capture interval, seconds.
    let interval: Double
    /// Above this share of the time it has, sustained for ``overloadSeconds``, the stride doubles (up to
    /// ``maximumStride``); under ``recoveredShare`` for ``recoverySeconds``, it halves.
    let overloadedShare = 0.85
    let recoveredShare = 0.4
    let overloadSeconds = 2.0
    let recoverySeconds = 5.0
    static let maximumStride = 8

    private(set) var stride = 1
    /// Encode time, smoothed (seconds).
    private(set) var averageSeconds: Double?
    private var overloadedSince: Double?
    private var recoveredSince: Double?
    private var ticks = 0

    init(interval: Double) { self.interval = interval }

    /// Whether the next changed frame is to be skipped (one in ``stride`` is coded).
    mutating func skipsNextFrame() -> Bool {
        ticks += 1
        if ticks >= stride {
            ticks = 0
            return false
        }
        return true
    }

    /// An encode took `seconds`, finishing at `now`; returns whether the stride changed.
    @discardableResult
    mutating func encoded(taking seconds: Double, now: Double) -> Bool {
        let average = averageSeconds.map { 0.8 * $0 + 0.2 * seconds } ?? seconds
        averageSeconds = average
        let budget = interval * Double(stride)
        if average > overloadedShare * budget {
            recoveredSince = nil
            let since = overloadedSince ?? now
            overloadedSince = since
            if now - since >= overloadSeconds, stride < Self.maximumStride {
                stride *= 2
                overloadedSince = nil
                return true
            }
        } else if average < recoveredShare * interval * Double(max(1, stride / 2)), stride > 1 {
            overloadedSince = nil
            let since = recoveredSince ?? now
            recoveredSince = since
            if now - since >= recoverySeconds {
                stride /= 2
                recoveredSince = nil
                return true
            }
        } else {
            overloadedSince = nil
            recoveredSince = nil
        }
        return false
    }
}
