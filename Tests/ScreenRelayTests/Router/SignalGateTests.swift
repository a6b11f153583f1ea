import ScreenWire
import Testing

@testable import ScreenRelay

/// Which signals go out, from made-up senders and times.
@Suite struct SignalGateTests {
    @Test func aConnectionHasItsBurstThenItsRate() {
        var limits = RouterLimits()
        limits.sessionSignalsPerSecond = 1000
        limits.tokenShares.signalsPerSecond = 1000
        var gate = SignalGate(limits: limits)
        var shares = TokenShares(limits: limits.tokenShares)
        _ = shares.join("a", token: "a", role: .subscriber)
        let sent = (0..<100).count { _ in gate.admit("a", now: 0, shares: &shares) == nil }
        #expect(sent == 40, "its burst")
        #expect(gate.admit("a", now: 0, shares: &shares)?.contains("at most 20 a second") == true)
        #expect(gate.admit("a", now: 0.05, shares: &shares) == nil, "one more every 50 ms")
        gate.forget("a")
        #expect(gate.admit("a", now: 0.05, shares: &shares) == nil, "a new connection starts with a full allowance")
    }

    @Test func theSessionBoundsEveryoneTogether() {
        let limits = RouterLimits()
        var gate = SignalGate(limits: limits)
        var shares = TokenShares(limits: limits.tokenShares)
        let ids = (0..<20).map { "c\($0)" }
        for id in ids { _ = shares.join(id, token: id, role: .subscriber) }
        var refusals: [String] = []
        var sent = 0
        for _ in 0..<10 {
            for id in ids {
                if let refusal = gate.admit(id, now: 0, shares: &shares) { refusals.append(refusal) } else { sent += 1 }
            }
        }
        #expect(sent == 100, "twice the session's 50 a second at once")
        #expect(refusals.allSatisfy { $0.contains("in this session") })
    }
}
