import ScreenWire
import Testing

@testable import ScreenRelay

/// The gauges a stream keeps as its subscriptions change (``SubscriptionGauges``: those timed closely, and how
/// many get each layer) are at every moment what a walk of every subscription gives: through a thin link's
/// thinning, holding, fitting in and restarts, and as subscriptions end.
@Suite struct SubscriptionGaugesTests {
    typealias Router = StreamRouterTests.Router

    /// What a walk of every subscription gives.
    static func walked(_ router: Router) -> (byLayer: [Int?: Int], watched: [String]) {
        var byLayer: [Int?: Int] = [:]
        var watched = Set<String>()
        for stream in router.streams.values {
            for position in stream.subscribers.indices {
                let reading = stream.subscribers.values[position].reading(topLayer: stream.cadence.topLayer)
                byLayer[reading.layer, default: 0] += 1
                if reading.watched { watched.insert(stream.subscribers.ids[position]) }
            }
        }
        return (byLayer, watched.sorted())
    }

    @Test(arguments: [true, false])
    func theGaugesFollowEverySubscriptionOnAThinLink(discardableLayers: Bool) {
        var steps = 0
        var differences: [String] = []
        var layersSeen = Set<Int?>()
        var watchedAtSomePoint = false
        _ = ThinLinkSimulation.run(
            ThinLinkSimulation.bursts(seconds: 30), until: 30, discardableLayers: discardableLayers, catchUp: true, tickEvery: 0.1,
            sampleEvery: 0.1
        ) { router in
            steps += 1
            let walk = Self.walked(router)
            if walk.byLayer != router.subscribersByLayer || walk.watched != router.closelyWatchedSubscriberIds {
                differences.append("step \(steps): walked \(walk), kept \(router.subscribersByLayer) \(router.closelyWatchedSubscriberIds)")
            }
            layersSeen.formUnion(walk.byLayer.keys)
            watchedAtSomePoint = watchedAtSomePoint || !walk.watched.isEmpty
        }
        #expect(differences.isEmpty, "\(differences.prefix(3))")
        // The run moved them: the slow subscriber was thinned below the top layer and timed closely.
        #expect(steps > 100 && layersSeen.count >= 2 && watchedAtSomePoint, "\(layersSeen)")
    }

    @Test func subscriptionsThatEndLeaveTheGauges() {
        var router = StreamRouterTests().sessionWithStream(subscribers: ["a", "b", "c"])
        for subscriber in ["a", "b", "c"] { _ = router.handle(.subscribe(streamId: 1), from: subscriber, now: 0) }
        #expect(router.subscribersByLayer == [nil: 3], "waiting for a keyframe")
        _ = router.frame("k", header: StreamRouterTests().header(1, 0, key: true), size: 1000, from: "p", now: 0.1)
        #expect(router.subscribersByLayer.values.reduce(0, +) == 3)
        _ = router.handle(.unsubscribe(streamId: 1), from: "a", now: 1)
        _ = router.disconnect("b", now: 1)
        #expect(router.subscribersByLayer.values.reduce(0, +) == 1 && router.subscribersByLayer == Self.walked(router).byLayer)
        _ = router.disconnect("p", now: 2)
        #expect(router.subscribersByLayer.isEmpty && router.closelyWatchedSubscriberIds.isEmpty)
    }
}
