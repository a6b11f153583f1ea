/// A rate with a burst: `rate` tokens a second accrue up to `burst`, and each allowed event spends one. Pure:
/// the caller passes the time (seconds on any monotonic clock).
struct TokenBucket: Sendable {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var filledAt: Double?

    /// Starts full.
    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Spends a token if there is one.
    mutating func take(now: Double) -> Bool {
        fill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether it has refilled to its burst (its owner has rested): such a bucket can be forgotten and made anew.
    func isFull(now: Double) -> Bool {
        var copy = self
        copy.fill(now: now)
        return copy.tokens >= burst
    }

    private mutating func fill(now: Double) {
        if let filledAt { tokens = min(burst, tokens + max(0, now - filledAt) * rate) }
        filledAt = now
    }
}
