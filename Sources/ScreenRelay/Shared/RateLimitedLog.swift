import Foundation
import Logging
import ScreenMedia

/// One log line per interval for a condition that can repeat thousands of times a second (a connection flood,
/// plain HTTP to the TLS port): the first occurrence is said at once; the ones after it within the interval are
/// counted, and said as one line with their number when the interval ends ("… (1 234 more times in the last
/// minute)"), which opens the next interval. An interval with no occurrence says nothing, and the next
/// occurrence is said at once again. So each interval has at most one line, and no occurrence goes uncounted.
final class RateLimitedLog: Sendable {
    let logger: Logger
    let interval: Duration

    private struct State {
        /// The end of the interval the last line opened; nil before the first.
        var intervalEnds: ContinuousClock.Instant?
        /// Occurrences not said since the last line, and the latest one's message.
        var unsaid = 0
        var latest = ""
        /// Whether a line is due at the end of the interval.
        var scheduled = false
    }

    private let state = Locked(State())

    init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    func log(_ message: @autoclosure () -> String) {
        let now = ContinuousClock.now
        let text = message()
        enum Step { case say, count, sayAt(ContinuousClock.Instant) }
        let step = state.withLock { state -> Step in
            guard let ends = state.intervalEnds, now < ends else {
                state.intervalEnds = now + interval
                return .say
            }
            state.unsaid += 1
            state.latest = text
            guard !state.scheduled else { return .count }
            state.scheduled = true
            return .sayAt(ends)
        }
        switch step {
        case .say:
            logger.warning("\(text) (said at most once \(Self.describe(interval, last: false)))")
        case .count:
            break
        case .sayAt(let end):
            Task { [weak self] in
                try? await Task.sleep(until: end, clock: .continuous)
                self?.sayUnsaid()
            }
        }
    }

    /// At the end of an interval: the occurrences not said in it, as one line that opens the next interval.
    private func sayUnsaid() {
        let now = ContinuousClock.now
        let unsaid = state.withLock { state -> (count: Int, latest: String)? in
            state.scheduled = false
            guard state.unsaid > 0 else { return nil }
            defer { (state.unsaid, state.latest) = (0, "") }
            state.intervalEnds = now + interval
            return (state.unsaid, state.latest)
        }
        guard let unsaid else { return }
        logger.warning(
            "\(unsaid.latest) (\(Self.grouped(unsaid.count)) more \(unsaid.count == 1 ? "time" : "times") in the last \(Self.describe(interval, last: true)); said at most once \(Self.describe(interval, last: false)))")
    }

    /// "a minute" / "minute", else the seconds ("5 s").
    static func describe(_ interval: Duration, last: Bool) -> String {
        if interval == .seconds(60) { return last ? "minute" : "a minute" }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18
        let text = seconds == seconds.rounded() ? "\(Int(seconds))" : String(format: "%.1f", seconds)
        return last ? "\(text) s" : "per \(text) s"
    }

    /// A count with its thousands set apart by spaces, as the relay's documents write them ("1 234").
    static func grouped(_ count: Int) -> String {
        var digits = String(count.magnitude)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        groups.insert(Substring(digits), at: 0)
        return (count < 0 ? "-" : "") + groups.joined(separator: " ")
    }
}
