import Foundation
public import ScreenMedia

/// A frame source without a display: the quadrant pattern, shifted one colour every `changeEvery` ticks (so
/// the stream has deltas) and unchanged in between (so idle ticks are exercised). Paced like a real
/// capture (``TickSchedule``). A test double for X11/PipeWire capture, where no display is wanted.
public final class TestPatternFrameSource: FrameSource {
    public let size: (width: Int, height: Int)
    let changeEvery: Int
    /// Fails the capture after this many ticks (to test retry policies); nil never.
    let failure: (after: Int, error: any Error)?

    public init(width: Int = 320, height: Int = 240, changeEvery: Int = 2, failAfter ticks: Int? = nil, with error: (any Error)? = nil) {
        size = (width, height)
        self.changeEvery = max(1, changeEvery)
        failure = ticks.map { ($0, error ?? CancellationError()) }
    }

    public func run(framesPerSecond: Double, stop: StopSignal, consumer: any FrameConsumer) throws {
        let frame = VideoFrame(width: size.width, height: size.height)
        var schedule = TickSchedule(framesPerSecond: framesPerSecond, clock: MonotonicClock())
        var tick = 0
        while !stop.isStopped {
            let now = schedule.clock.nanoseconds(fromTicks: schedule.clock.now())
            if now < schedule.nextDeadline { usleep(useconds_t(min(50_000, (schedule.nextDeadline - now) / 1000))); continue }
            if let failure, tick >= failure.after { throw failure.error }
            let time = schedule.clock.mediaTime(fromTicks: schedule.clock.now())
            frame.captureTime = time
            frame.wallClock = .now()
            if tick % changeEvery == 0 {
                let shift = tick / changeEvery
                TestPattern.fill(frame) { x, y in
                    let colors = TestPattern.quadrantColors
                    return colors[((y < frame.height / 2 ? 0 : 2) + (x < frame.width / 2 ? 0 : 1) + shift) % colors.count]
                }
                try consumer.consume(frame, sizeChanged: tick == 0)
            } else {
                try consumer.consumeUnchanged(frame, at: time)
            }
            tick += 1
            schedule.advance(reportingMissedTicksTo: consumer)
        }
    }
}

@available(*, unavailable, message: "runs on the capture thread")
extension TestPatternFrameSource: Sendable {}
