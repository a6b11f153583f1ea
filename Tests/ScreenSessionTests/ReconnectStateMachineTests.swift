import ScreenSession
import ScreenTransport
import ScreenWire
import Testing

/// Reconnection decided with made-up times: no clock, no sockets.
@Suite struct ReconnectStateMachineTests {
    let lost = RelayClientError(.unreachable, "cannot connect to the relay")

    @Test func backoffDoublesUpToTheMaximumAndJitterStaysWithinTwentyPercent() {
        var machine = ReconnectStateMachine(policy: .init())
        #expect(machine.start() == .connectNow)
        var delays: [Double] = []
        for attempt in 1...10 {
            machine.opening(at: Double(attempt))
            guard case .connectAfter(let delay, let number) = machine.ended(with: lost, streamFinished: false, at: Double(attempt) + 0.1, jitter: 0) else {
                Issue.record("expected a reconnection")
                return
            }
            #expect(number == attempt)
            delays.append(delay)
        }
        #expect(delays == [0.25, 0.5, 1, 2, 4, 8, 15, 15, 15, 15])
        #expect(ReconnectStateMachine.Policy().delay(attempt: 3, jitter: 1) == 1.2)
        #expect(ReconnectStateMachine.Policy().delay(attempt: 3, jitter: -5) == 0.8)
    }

    @Test func aConnectionThatLastedStartsTheBackoffOver() {
        var machine = ReconnectStateMachine(policy: .init())
        machine.opening(at: 0)
        _ = machine.ended(with: lost, streamFinished: false, at: 0.1, jitter: 0)
        machine.opening(at: 1)
        _ = machine.ended(with: lost, streamFinished: false, at: 1.1, jitter: 0)
        #expect(machine.attempt == 2)
        machine.opening(at: 2)
        #expect(machine.ended(with: lost, streamFinished: false, at: 30, jitter: 0) == .connectAfter(seconds: 0.25, attempt: 1))
    }

    @Test func refusedTokensFailAtOnceAndAFinishedStreamEnds() {
        var machine = ReconnectStateMachine(policy: .init())
        let refused = RelayClientError(.refused(.tokenExpired), "the token has expired")
        #expect(machine.ended(with: refused, streamFinished: false, at: 0, jitter: 0) == .fail)
        #expect(machine.ended(with: lost, streamFinished: true, at: 0, jitter: 0) == .finish)
        #expect(machine.ended(with: nil, streamFinished: false, at: 0, jitter: 0) == .finish)
        // A transient failure is retried; a refusal the relay would repeat is not.
        #expect(machine.ended(with: RelayClientError(.refused(.internalError), "oops"), streamFinished: false, at: 0, jitter: 0) != .fail)
    }

    /// A session full of viewers, or a publisher token whose old connections the relay has not yet seen die, is
    /// refused for capacity: the publisher tries again with the backoff, as for a lost connection, instead of
    /// leaving the session without its stream.
    @Test func aRefusalForCapacityOrRateIsRetriedWithTheBackoff() {
        var machine = ReconnectStateMachine(policy: .init())
        for (attempt, code) in [WireErrorCode.full, .rateLimited, .full].enumerated() {
            let refused = RelayClientError(.refused(code), "this session holds 2000 connections, the most it may; try again later")
            #expect(machine.ended(with: refused, streamFinished: false, at: 0, jitter: 0) == .connectAfter(seconds: 0.25 * Double(1 << attempt), attempt: attempt + 1))
        }
    }

    @Test func withoutReconnectionAnyFailureIsFinal() {
        var machine = ReconnectStateMachine(policy: .never)
        #expect(machine.ended(with: lost, streamFinished: false, at: 0, jitter: 0) == .fail)
    }
}
