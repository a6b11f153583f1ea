/// How often a rate backs off: once per round of bad news (the frames already on their way were coded at the old
/// rate, and their news is the same news), and how long since it last did. Pure: the caller passes the time.
struct BackoffThrottle: Sendable {
    /// One back-off per this many seconds at most.
    static var roundSeconds: Double { 0.5 }

    private(set) var lastBackoff = -Double.infinity

    /// Whether the rate may back off now; if so, that it did.
    mutating func backOff(now: Double) -> Bool {
        guard now - lastBackoff >= Self.roundSeconds else { return false }
        lastBackoff = now
        return true
    }

    /// Seconds since the last back-off.
    func sinceBackoff(now: Double) -> Double { now - lastBackoff }
}
