public import Logging
public import ScreenMedia
import ScreenTransport
import ScreenWire

/// When a publisher connects again after losing its relay, as a pure state machine: it is told what happened
/// and at what time, and answers what to do. No clock, no sockets: ``RelayPublisher`` carries the actions out,
/// tests drive it with made-up times.
public struct ReconnectStateMachine: Sendable {
    /// How to come back: exponential backoff with jitter, bounded.
    public struct Policy: Sendable, Equatable {
        /// Whether to reconnect at all (a refused token never is).
        public var enabled: Bool
        /// The first delay; each further attempt doubles it, up to ``maximumDelay``; ±20 % jitter.
        public var initialDelay: Double
        public var maximumDelay: Double
        /// A connection that lasted this long starts the backoff over.
        public var stableAfter: Double

        public init(enabled: Bool = true, initialDelay: Double = 0.25, maximumDelay: Double = 15, stableAfter: Double = 10) {
            self.enabled = enabled
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.stableAfter = stableAfter
        }

        public static let never = Policy(enabled: false)

        /// The delay before attempt `attempt` (1-based), jittered by `jitter` in -1...1.
        public func delay(attempt: Int, jitter: Double) -> Double {
            let base = min(maximumDelay, initialDelay * Double(1 << min(max(0, attempt - 1), 30)))
            return base * (1 + 0.2 * max(-1, min(1, jitter)))
        }
    }

    public enum Action: Sendable, Equatable {
        /// Open a connection now.
        case connectNow
        /// Wait this many seconds (or until the stream is finished), then open a connection.
        case connectAfter(seconds: Double, attempt: Int)
        /// The stream is over: stop without an error.
        case finish
        /// Stop: the failure is final (a refusal another attempt would meet again, or reconnection is off).
        case fail
    }

    public let policy: Policy
    /// Failed attempts since the last connection that lasted.
    public private(set) var attempt = 0
    private var openedAt: Double?

    public init(policy: Policy) { self.policy = policy }

    /// The first action: connect.
    public mutating func start() -> Action { .connectNow }

    /// A connection is being opened at `time` (seconds on any monotonic clock).
    public mutating func opening(at time: Double) { openedAt = time }

    /// The connection ended at `time`: cleanly with the stream finished (`failure` nil), or with `failure`.
    /// `jitter` in -1...1 spreads the reconnections of many publishers.
    public mutating func ended(with failure: (any ConnectionFailure)?, streamFinished: Bool, at time: Double, jitter: Double) -> Action {
        guard !streamFinished, let failure else { return .finish }
        guard policy.enabled, !failure.isPermanent else { return .fail }
        if let openedAt, time - openedAt >= policy.stableAfter { attempt = 0 }
        attempt += 1
        return .connectAfter(seconds: policy.delay(attempt: attempt, jitter: jitter), attempt: attempt)
    }

}

extension ReconnectStateMachine {
    /// Carries the machine's actions out for a publisher (the relay's, WHIP's): `connectOnce` until the stream is
    /// finished, again after the backoff when it fails. `recordFailure` keeps the last problem (for status and the
    /// next warning, which `lastProblem` reads); waits end early when `finished` is signalled. Throws the failure
    /// that is not retried (a refusal, or any with reconnection off).
    public static func keepConnected(
        policy: Policy, finished: OneShotEvent, isFinished: () -> Bool, lastProblem: () -> String?,
        recordFailure: (any ConnectionFailure) -> Void, logger: Logger, connectOnce: () async throws -> Void
    ) async throws {
        var machine = ReconnectStateMachine(policy: policy)
        let clock = ContinuousClock()
        let origin = clock.now
        func seconds() -> Double { (clock.now - origin) / .seconds(1) }
        var action = machine.start()
        // What a final `.fail` throws: the failure as its transport made it.
        var lastFailure: (any ConnectionFailure)?
        while true {
            switch action {
            case .finish:
                return
            case .fail:
                throw lastFailure ?? RelayClientError(.closed, "the connection ended")
            case .connectAfter(let delay, let attempt):
                logger.warning("\(lastProblem() ?? "the connection ended"); reconnecting in \(String(format: "%.1f", delay)) s (attempt \(attempt))")
                // Woken early when the stream is finished: nothing is left to send.
                await finished.wait(upTo: .milliseconds(Int(delay * 1000)))
                if isFinished() || Task.isCancelled { return }
                fallthrough
            case .connectNow:
                if Task.isCancelled { return }
                machine.opening(at: seconds())
                var failure: (any ConnectionFailure)?
                do {
                    try await connectOnce()
                } catch let error as any ConnectionFailure {
                    failure = error
                } catch {
                    failure = RelayClientError(.closed, "the connection failed: \(error)")
                }
                if let failure {
                    recordFailure(failure)
                    lastFailure = failure
                }
                action = machine.ended(with: failure, streamFinished: isFinished(), at: seconds(), jitter: Double.random(in: -1...1))
            }
        }
    }
}
