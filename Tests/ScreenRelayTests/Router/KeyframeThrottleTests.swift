import Testing

@testable import ScreenRelay

/// When a stream's publisher is asked for a keyframe, from made-up requests.
@Suite struct KeyframeThrottleTests {
    @Test func requestsAreSpacedAndMergedIntoOnePending() {
        var throttle = KeyframeThrottle(limits: RouterLimits())
        #expect(throttle.request(.relay, now: 100) == true)
        #expect(!throttle.request(.relay, now: 100.2) && throttle.pending == .relay, "within 0.5 s: pending")
        #expect(throttle.request(.relay, now: 100.6) && throttle.pending == nil)
    }

    @Test func subscribersGetOneKeyframeEveryThirtySecondsAtMost() {
        var throttle = KeyframeThrottle(limits: RouterLimits())
        throttle.keyframeArrived(now: 0)
        #expect(!throttle.request(.newSubscriber, now: 10) && throttle.pending == .newSubscriber)
        #expect(throttle.subscriberCeilingEnds == 30)
        #expect(throttle.request(.relay, now: 11) == true, "the relay's own requests are not under the ceiling")
        #expect(throttle.request(.subscriberBehind, now: 20) == false)
        #expect(throttle.request(.subscriberBehind, now: 30) && throttle.subscriberCeilingEnds == 60)
        #expect(throttle.request(.subscriberAsked, now: 31) == false)
        // A keyframe that comes resets the ceiling from it, and clears what is pending.
        throttle.keyframeArrived(now: 40)
        #expect(throttle.pending == nil && throttle.subscriberCeilingEnds == 70)
    }

    @Test func theRelaysCauseWinsOverASubscribersWhilePending() {
        var throttle = KeyframeThrottle(limits: RouterLimits())
        _ = throttle.request(.relay, now: 0)
        _ = throttle.request(.relay, now: 0.1)
        _ = throttle.request(.newSubscriber, now: 0.2)
        #expect(throttle.pending == .relay)
    }
}
