/// When a frame source's ticks are due: tick k at start + k × interval on the monotonic clock, so pacing
/// never drifts; ticks that a slow capture or encode overran are skipped and reported, not made up.
public struct TickSchedule: Sendable {
    public let clock: MonotonicClock
    /// Nanoseconds between ticks.
    public let interval: UInt64
    private let start: UInt64
    private var tick: UInt64 = 0

    public init(framesPerSecond: Double, clock: MonotonicClock) {
        precondition(framesPerSecond > 0, "frame rate must be positive")
        self.clock = clock
        interval = UInt64(1e9 / framesPerSecond)
        start = clock.nanoseconds(fromTicks: clock.now())
    }

    /// The monotonic time of the next tick, in nanoseconds.
    public var nextDeadline: UInt64 { start + tick * interval }

    /// Moves on after a tick; tells `consumer` how many ticks were missed when more than one interval late.
    public mutating func advance(reportingMissedTicksTo consumer: any FrameConsumer) {
        tick += 1
        let now = clock.nanoseconds(fromTicks: clock.now())
        let due = nextDeadline
        if now > due + interval {
            let behind = (now - due) / interval
            consumer.missedTicks(Int(behind))
            tick += behind
        }
    }
}
