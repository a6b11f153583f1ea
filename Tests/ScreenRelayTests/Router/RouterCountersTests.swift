import Testing

@testable import ScreenRelay

/// A router's counters folded into the relay's metrics: each fold adds what was counted since the last one.
@Suite struct RouterCountersTests {
    /// Counters with a different count in every field, times `scale`.
    static func counted(_ scale: Int) -> RouterCounters {
        var counters = RouterCounters()
        counters.droppedFrames = 1 * scale
        counters.droppedAudioFrames = 2 * scale
        counters.keyframeRequestsSent = 3 * scale
        counters.keyframeRequestsByCause = [.newSubscriber: 1 * scale, .relay: 2 * scale]
        counters.thinnedFrames = 4 * scale
        counters.fittedInFrames = 5 * scale
        counters.evictedSubscribers = 6 * scale
        counters.refused = [.keyframeRequests: 7 * scale, .frameRate: 8 * scale]
        return counters
    }

    /// What the metrics hold of each counter, in the order of ``counted(_:)``.
    static func folded(_ metrics: RelayMetrics) -> [Int] {
        [
            metrics.value(.framesDropped), metrics.value(.audioFramesDropped), metrics.value(RelayMetrics.Name.keyframeRequests),
            metrics.value(.keyframeRequestsByCause, KeyframeCause.newSubscriber.rawValue),
            metrics.value(.keyframeRequestsByCause, KeyframeCause.relay.rawValue), metrics.value(.framesThinned),
            metrics.value(.framesFittedIn), metrics.value(.subscribersEvicted), metrics.value(RelayLimit.keyframeRequests),
            metrics.value(RelayLimit.frameRate),
        ]
    }

    @Test func eachCounterGoesToItsOwnMetric() {
        let metrics = RelayMetrics()
        metrics.fold(Self.counted(1), since: RouterCounters())
        #expect(Self.folded(metrics) == [1, 2, 3, 1, 2, 4, 5, 6, 7, 8])
    }

    @Test func foldsAddOnlyWhatWasCountedSinceTheLast() {
        let metrics = RelayMetrics()
        metrics.fold(Self.counted(1), since: RouterCounters())
        metrics.fold(Self.counted(1), since: Self.counted(1))
        #expect(Self.folded(metrics) == [1, 2, 3, 1, 2, 4, 5, 6, 7, 8], "nothing new: nothing added")
        metrics.fold(Self.counted(3), since: Self.counted(1))
        #expect(Self.folded(metrics) == [3, 6, 9, 3, 6, 12, 15, 18, 21, 24], "the folds add up to the last count")
    }

    @Test func aCauseOrALimitIsASeriesOnceItHasCounted() {
        let metrics = RelayMetrics()
        var counters = RouterCounters()
        counters.keyframeRequestsByCause[.subscriberAsked] = 0
        metrics.fold(counters, since: RouterCounters())
        #expect(!metrics.exposition().contains(#"cause="subscriber_asked""#), "a cause counted zero times is no series")
        var later = counters
        later.keyframeRequestsByCause[.subscriberAsked] = 2
        later.refused[.captureTime] = 1
        metrics.fold(later, since: counters)
        let exposition = metrics.exposition()
        #expect(exposition.contains(#"screenrelay_keyframe_requests_by_cause_total{cause="subscriber_asked"} 2"#), "\(exposition)")
        #expect(!exposition.contains(#"cause="new_subscriber""#))
        #expect(exposition.contains(#"screenrelay_refused_total{limit="capture_time"} 1"#))
    }
}
