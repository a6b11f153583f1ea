import Testing

@testable import ScreenRelay

/// A subscriber's link from made-up sends, deliveries and kernel samples.
@Suite struct SubscriberLinkTests {
    @Test func framesThatWaitedMeasureTheDrainRate() {
        var link = SubscriberLink(now: 0)
        #expect(link.drainRate == nil)
        // Ten 10 KB frames queued at once, delivered 0.1 s apart: 100 KB/s.
        for _ in 0..<10 { link.sent(10_000, fittedIn: false, now: 0) }
        for index in 1...10 { #expect(link.delivered(now: Double(index) * 0.1) == true) }
        #expect(abs((link.drainRate ?? 0) - 100_000) < 1)
        #expect(link.inFlight.isEmpty && link.queuedBytes == 0 && !link.delivered(now: 2))
    }

    @Test func aFrameToAnIdleLinkMeasuresNothing() {
        var link = SubscriberLink(now: 0)
        for second in 1...5 {
            link.sent(20_000, fittedIn: false, now: Double(second))
            _ = link.delivered(now: Double(second) + 0.001)
        }
        #expect(link.drainRate == nil, "deliveries of frames sent to an idle socket say nothing of the link")
    }

    @Test func theKernelsMeasureWinsAndItsLowestClimbsSlowly() {
        var link = SubscriberLink(now: 0)
        link.measured(deliveryBytesPerSecond: 50_000, pendingBytes: 0, now: 0)
        #expect(link.kernelRate == 50_000 && link.kernelRateLow == 50_000 && link.drainRate == 50_000)
        link.measured(deliveryBytesPerSecond: 90_000, pendingBytes: 0, now: 0.5)
        #expect(abs((link.kernelRate ?? 0) - 62_000) < 1, "smoothed: 0.7 × 50 000 + 0.3 × 90 000")
        #expect(abs((link.kernelRateLow ?? 0) - 51_000) < 1, "the lowest climbs 2 % a sample")
        // Not a number, negative or nothing: not a measure.
        for rate in [Double.nan, -.infinity, .infinity, -5, nil] { link.measured(deliveryBytesPerSecond: rate, pendingBytes: -3, now: 1) }
        #expect(abs((link.kernelRate ?? 0) - 62_000) < 1 && link.hiddenBytes == 0)
    }

    /// A link that narrowed shows within two measures; a burst through a token bucket at the line's rate counts at most
    /// twice the rate it had.
    @Test func aNarrowingShowsAtOnceABurstCountsAtMostTwice() {
        var link = SubscriberLink(now: 0)
        link.measured(deliveryBytesPerSecond: 125_000, pendingBytes: 0, now: 0)
        link.measured(deliveryBytesPerSecond: 31_000, pendingBytes: 60_000, now: 0.5)
        #expect(abs((link.kernelRate ?? 0) - 78_000) < 1, "0.5 × 125 000 + 0.5 × 31 000")
        #expect(abs(link.queuedMilliseconds(now: 0.5) - 60_000 / 78.0) < 1, "what the kernel holds, timed at the lower rate")
        link.measured(deliveryBytesPerSecond: 3_000_000, pendingBytes: 0, now: 1)
        #expect(abs((link.kernelRate ?? 0) - (0.7 * 78_000 + 0.3 * 156_000)) < 1, "counted as twice the rate, not 40 times")
    }

    /// A run from an idle start timed before the link narrowed does not outlast the kernel measuring it narrower:
    /// it would fit frames in that the link no longer has room for.
    @Test func aRunFromAnIdleStartIsNoFasterThanTheLinkMeasuredBusy() {
        var link = SubscriberLink(now: 0)
        link.sent(50_000, fittedIn: false, now: 1)
        _ = link.delivered(now: 1.01)
        link.measured(deliveryBytesPerSecond: nil, pendingBytes: 0, now: 1.5)
        #expect(link.idleStart.rate == 100_000 && link.fitRate == 100_000)
        link.measured(deliveryBytesPerSecond: 31_000, pendingBytes: 40_000, now: 2)
        #expect(link.idleStart.rate == 31_000 && link.fitRate == 31_000)
        link.measured(deliveryBytesPerSecond: 60_000, pendingBytes: 0, now: 2.5)
        #expect(link.idleStart.rate == 31_000, "a higher busy measure says nothing of a run from idle")
    }

    @Test func whatIsQueuedIsTimedAtTheDrainRateWithWhatTheKernelHolds() {
        var link = SubscriberLink(now: 0)
        link.measured(deliveryBytesPerSecond: 10_000, pendingBytes: 5_000, now: 0)
        #expect(link.queuedMilliseconds(now: 0) == 500, "the kernel's 5 KB at 10 KB/s")
        link.sent(10_000, fittedIn: false, now: 0)
        link.sent(10_000, fittedIn: true, now: 0)
        #expect(link.queuedMilliseconds(now: 0) == 2500)
        #expect(link.layersMilliseconds(queued: 2500) == 1500, "a frame fitted in above its layers does not count against them")
        // 3 s on a 1 s frame: the link stopped, and the overrun counts.
        #expect(link.queuedMilliseconds(now: 3) == 2500)
        #expect(link.millisecondsToCarry(10_000, behind: 0) == 1000)
    }

    @Test func aLinkThatTakesNothingStalls() {
        var link = SubscriberLink(now: 0)
        #expect(!link.hasStalled(now: 100, for: 20), "nothing queued: not stalled")
        link.sent(1000, fittedIn: false, now: 1)
        #expect(!link.hasStalled(now: 20.9, for: 20) && link.hasStalled(now: 21, for: 20))
        _ = link.delivered(now: 21)
        #expect(!link.hasStalled(now: 60, for: 20))
    }

    @Test func aRunFromAnIdleStartIsTimedUntilTheKernelHoldsNone() {
        var link = SubscriberLink(now: 0)
        link.sent(30_000, fittedIn: false, now: 10)
        #expect(link.idleStart.isTiming && link.fitRate == nil)
        _ = link.delivered(now: 10.01)
        link.measured(deliveryBytesPerSecond: nil, pendingBytes: 12_000, now: 10.5)
        link.measured(deliveryBytesPerSecond: nil, pendingBytes: 0, now: 11)
        #expect(link.idleStart.rate == 30_000 && link.fitRate == 30_000 && link.shownRate == 30_000)
        link.measured(deliveryBytesPerSecond: 45_000, pendingBytes: 0, now: 11.5)
        #expect(link.fitRate == 30_000, "what a frame after a gap takes") 
        #expect(link.shownRate == 45_000, "the higher of the two shows what the link carries")
    }
}
