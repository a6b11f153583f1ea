import Testing

@testable import ScreenRelay

/// How fast a link carries a run of frames from an idle start, from made-up sends, kernel measures and times.
@Suite struct IdleStartTimingTests {
    @Test func aRunIsTimedFromItsFirstFrameUntilNeitherTheKernelNorTheQueueHoldsAny() {
        var timing = IdleStartTiming()
        timing.measured(pendingBytes: 0, queueEmpty: true, now: 5)
        #expect(!timing.isTiming && timing.rate == nil, "nothing sent: nothing timed")
        timing.sent(10_000, now: 10)
        timing.sent(10_000, now: 10.05)
        #expect(timing.isTiming)
        timing.measured(pendingBytes: 5_000, queueEmpty: true, now: 10.1)
        timing.measured(pendingBytes: 0, queueEmpty: false, now: 10.15)
        #expect(timing.isTiming && timing.rate == nil, "the kernel or the relay still holds some of the run")
        timing.measured(pendingBytes: 0, queueEmpty: true, now: 10.2)
        #expect(!timing.isTiming)
        #expect(abs((timing.rate ?? 0) - 100_000) < 1e-6, "20 000 bytes over the 0.2 s since the first was sent: \(String(describing: timing.rate))")
    }

    @Test func aRunTooShortOrTooSmallEndsWithoutASample() {
        var timing = IdleStartTiming()
        timing.run(4_095, from: 0, to: 1)
        #expect(!timing.isTiming && timing.rate == nil, "under 4096 bytes")
        timing.run(1_000_000, from: 2, to: 2.049)
        #expect(!timing.isTiming && timing.rate == nil, "under 50 ms")
        // Both limits are inclusive.
        timing.run(4_096, from: 0, to: 0.05)
        #expect(timing.rate == 4_096 / 0.05)
    }

    @Test func eachRunMovesTheRateHalfWayToItsOwn() {
        var timing = IdleStartTiming()
        timing.run(100_000, from: 0, to: 1)
        #expect(timing.rate == 100_000, "the first run is the rate")
        timing.run(300_000, from: 10, to: 11)
        #expect(timing.rate == 200_000)
        timing.run(40_000, from: 20, to: 21)
        #expect(timing.rate == 120_000)
        // A run too short to tell leaves the rate as it was.
        timing.run(1_000, from: 30, to: 31)
        #expect(timing.rate == 120_000)
    }

    @Test func aClockThatWentBackEndsTheRunWithoutASample() {
        var timing = IdleStartTiming()
        timing.run(100_000, from: 50, to: 49)
        #expect(!timing.isTiming && timing.rate == nil, "no negative or infinite rate")
        // The next run starts at its own first frame, not at the one that ended.
        timing.run(100_000, from: 60, to: 61)
        #expect(timing.rate == 100_000)
    }
}

extension IdleStartTiming {
    /// A run of `bytes` sent at `start`, all of it gone from the kernel and the relay's queue at `end`.
    mutating func run(_ bytes: Int, from start: Double, to end: Double) {
        sent(bytes, now: start)
        measured(pendingBytes: 0, queueEmpty: true, now: end)
    }
}
