/// Whether a client's signal (chat) goes out: within its connection's allowance (``RouterLimits/signalsPerSecond``,
/// ``RouterLimits/signalBurst``), its token's (``TokenShares``) and the whole session's
/// (``RouterLimits/sessionSignalsPerSecond``, twice as many at once). Each signal goes to everyone, so the
/// session's allowance bounds what many connections could make the relay deliver, whatever their number.
/// Pure: the router passes the time.
struct SignalGate {
    private let perConnectionRate: Double
    private let perConnectionBurst: Double
    private let sessionRate: Double
    private var connections: [String: TokenBucket] = [:]
    private var session: TokenBucket

    init(limits: RouterLimits) {
        perConnectionRate = limits.signalsPerSecond
        perConnectionBurst = limits.signalBurst
        sessionRate = limits.sessionSignalsPerSecond
        session = TokenBucket(rate: limits.sessionSignalsPerSecond, burst: 2 * limits.sessionSignalsPerSecond)
    }

    /// Spends a signal of `connectionId`'s: nil when it may go, else the sentence that refuses it.
    mutating func admit(_ connectionId: String, now: Double, shares: inout TokenShares) -> String? {
        var allowance = connections[connectionId] ?? TokenBucket(rate: perConnectionRate, burst: perConnectionBurst)
        defer { connections[connectionId] = allowance }
        guard allowance.take(now: now) else { return "too many signals: at most \(Int(perConnectionRate)) a second" }
        guard shares.takeSignal(connectionId, now: now) else {
            return "too many signals from this token: at most \(Int(shares.limits.signalsPerSecond)) a second from all its connections together"
        }
        guard session.take(now: now) else { return "too many signals in this session: at most \(Int(sessionRate)) a second from everyone together" }
        return nil
    }

    /// The connection left: its allowance goes with it.
    mutating func forget(_ connectionId: String) { connections[connectionId] = nil }
}
