import ScreenMedia
import ScreenTransport
import ScreenWire
import Testing

@testable import ScreenRelay

/// A subscriber on a thin link. A frame above its layers that its link has no room for when it comes is held
/// (the stream's layers being discardable), each newer one taking the place of the one before, and sent once the
/// link has room for it before the next layer-0 frame — so that a link idle after a layer-0 frame carries the
/// newest picture there is, not nothing; a held frame older than one sent since is never sent. And its socket is
/// paced at a little over what its link was measured to carry, while it is thinned.
@Suite struct ThinLinkTests {
    typealias Router = StreamRouterTests.Router
    typealias Link = StreamRouterTests.SimulatedLink

    /// A stream whose frames come in bursts (``ThinLinkSimulation/bursts(seconds:)``) to a fast subscriber and one
    /// whose link carries 31 KB/s (250 kbit/s: a 25 KB layer-0 frame is 0.8 s of it, and the frames above it come
    /// while it is on its way). The router is told what the kernel holds every 0.1 s, as the relay does for a
    /// thinned subscriber.
    static func runBursts(discardableLayers: Bool, seconds: Int = 40) -> (slow: [(name: String, arrived: Double)], fast: [String], router: Router) {
        let run = ThinLinkSimulation.run(
            ThinLinkSimulation.bursts(seconds: seconds), until: Double(seconds), discardableLayers: discardableLayers, catchUp: true,
            tickEvery: 0.1, sampleEvery: 0.1)
        return (run.slow.map { ($0.name, $0.arrived) }, run.fast, run.router)
    }

    @Test func theNewestFrameAboveItsLayersGoesOnceTheLinkHasRoom() {
        let held = Self.runBursts(discardableLayers: true)
        let thinned = Self.runBursts(discardableLayers: false)
        #expect(held.fast.count == 80 && thinned.fast.count == 80, "the fast subscriber gets every frame either way")
        func sequence(_ name: String) -> Int { Int(name.dropFirst().prefix { $0 != "/" })! }
        // From 10 s on, once the slow subscriber is thinned (its link carries layers 0 and 1, not 2).
        func settled(_ frames: [(name: String, arrived: Double)]) -> [Int] { frames.filter { $0.arrived >= 10 }.map { sequence($0.name) } }
        #expect(settled(thinned.slow).allSatisfy { $0 % 4 != 1 && $0 % 4 != 3 }, "without discardable layers, no layer-2 frame: \(settled(thinned.slow))")
        // Held: the burst's first layer-2 frame comes while the layer-0 and layer-1 frames are on their way and
        // waits; the second takes its place and goes once they are through. The first is never sent.
        let bursts = settled(held.slow)
        #expect(bursts.count(where: { $0 % 4 == 3 }) >= 14 && !bursts.contains { $0 % 4 == 1 }, "\(bursts)")
        // Nothing older than what it had goes to it.
        let sequences = held.slow.map { sequence($0.name) }
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 })
        // And no layer-0 frame came later for it.
        let layerZero = { (frames: [(name: String, arrived: Double)]) in frames.filter { $0.name.hasSuffix("/0") && $0.arrived >= 10 } }
        let lateness = zip(layerZero(held.slow), layerZero(thinned.slow)).map { $0.arrived - $1.arrived }
        #expect(lateness.count >= 14 && lateness.allSatisfy { $0 < 0.05 }, "\(lateness)")
    }

    /// Only a thinned subscriber whose link the kernel measured is paced, at 1.25 times the measure; once it gets
    /// every layer again it is not.
    @Test func aThinnedSubscribersSocketIsPacedAtALittleOverItsLink() {
        var router = StreamRouterTests().sessionWithStream(subscribers: ["fast", "slow"], discardableLayers: true)
        _ = router.handle(.subscribe(streamId: 1, layers: true), from: "slow", now: 0)
        router.linkMeasured("slow", deliveryBytesPerSecond: 31_000, pendingBytes: 0, now: 1)
        #expect(router.pacingRate(for: "slow") == nil, "it gets every layer: not paced")
        #expect(router.pacingRate(for: "nobody") == nil)
        let run = Self.runBursts(discardableLayers: true, seconds: 20)
        #expect((run.router.highestLayer(for: "slow", streamId: 1) ?? 2) < 2, "thinned")
        #expect(run.router.pacingRate(for: "slow") == 1.25 * 31_000)
        #expect(run.router.pacingRate(for: "fast") == nil)
    }

    /// A link that narrowed to 250 kbit/s and widens again to 1 Mbit/s, past the stream's rate: the kernel hardly
    /// measures it any more (it is rarely busy), but its frames' times from an idle start show the room, and the
    /// layers come back a step per few seconds of calm instead of waiting for probes.
    @Test func layersComeBackSoonAfterALinkWidens() {
        var router = StreamRouterTests().sessionWithStream(subscribers: ["viewer"], discardableLayers: true)
        _ = router.handle(.subscribe(streamId: 1, layers: true, catchUp: true), from: "viewer", now: 0)
        var link = Link(subscriber: "viewer", bytesPerSecond: 31_000)
        var sizes: [String: Int] = [:]
        var now = 0.0
        var backAt: Double?
        for step in 0..<600 {
            if step == 200 {
                // It widens at 20 s: what is on its way goes on at the new rate.
                var wide = Link(subscriber: "viewer", bytesPerSecond: 125_000)
                (wide.queue, wide.busyUntil, wide.received, wide.arrivals) = (link.queue, link.busyUntil, link.received, link.arrivals)
                link = wide
            }
            if step % 5 == 0 {
                let n = step / 5
                let layer = n == 0 ? 0 : [0, 2, 1, 2][n % 4]
                let name = "f\(n)/\(layer)"
                sizes[name] = layer == 0 ? 25_000 : 14_000
                link.take(router.frame(name, header: StreamRouterTests().header(1, UInt64(n), key: n == 0, layer: layer), size: sizes[name]!, from: "p", now: now), sizes: sizes, now: now)
            }
            for _ in 0..<10 {
                now += 0.01
                _ = link.advance(to: now, router: &router, sizes: sizes)
            }
            // Busy while frames queue; once wide, it never is for long: the kernel's sample is limited by what the
            // relay sends, and says nothing of the link.
            let busy = !link.queue.isEmpty && now < 20
            router.linkMeasured("viewer", deliveryBytesPerSecond: busy ? link.bytesPerSecond : nil, pendingBytes: 0, now: now)
            link.take(router.tick(now: now), sizes: sizes, now: now)
            if now > 20, backAt == nil, router.highestLayer(for: "viewer", streamId: 1) == 2 { backAt = now }
            if now > 15, now < 20 { #expect((router.highestLayer(for: "viewer", streamId: 1) ?? 2) < 2, "thinned on the narrow link") }
        }
        #expect(backAt.map { $0 - 20 <= 10 } ?? false, "every layer back \(backAt.map { "\($0 - 20) s" } ?? "never") after the link widened")
    }

    /// A link's rate between two readings of its socket: the kernel's measure when anything was acknowledged since
    /// (never its last measure read again); while the kernel calls its measure app-limited, what the peer
    /// acknowledged when the kernel held more all along — unless it carried about its pacing, which is then what it
    /// measures.
    @Test func aSocketsRateIsTheKernelsNewMeasureElseWhatItCarriedWhileBusyAndUnpaced() {
        var links = SubscriberLinks()
        func reading(_ acknowledged: UInt64, pending: Int, kernel: Double?) -> LinkSample {
            LinkSample(deliveryBytesPerSecond: kernel, pendingBytes: pending, acknowledgedBytes: acknowledged)
        }
        #expect(links.rate(of: "a", reading(1_000_000, pending: 60_000, kernel: 120_000), now: 10) == nil, "a first reading has nothing to go by")
        #expect(links.rate(of: "a", reading(1_015_000, pending: 50_000, kernel: nil), now: 10.5) == 30_000, "app-limited: 15 KB in half a second, busy all along")
        #expect(links.rate(of: "a", reading(1_015_000, pending: 50_000, kernel: 90_000), now: 11) == nil, "nothing acknowledged: no new measure")
        #expect(links.rate(of: "a", reading(1_030_000, pending: 0, kernel: 35_000), now: 11.5) == 35_000, "the kernel's new measure")
        #expect(links.rate(of: "a", reading(1_040_000, pending: 0, kernel: nil), now: 12) == nil, "app-limited, and it ran dry: nothing")
        #expect(links.rate(of: "a", reading(1_040_500, pending: 9_000, kernel: nil), now: 12.1) == nil, "too soon after the last to time it")
        #expect(links.rate(of: "b", reading(5, pending: 0, kernel: 42_000), now: 12.15) == nil, "each connection its own")
        _ = links.changes(for: ["a"], rate: { _ in 40_000 })
        _ = links.rate(of: "a", reading(1_050_000, pending: 60_000, kernel: nil), now: 13)
        #expect(links.rate(of: "a", reading(1_068_000, pending: 50_000, kernel: nil), now: 13.5) == nil, "about its pacing: that is what it measures")
        #expect(links.rate(of: "a", reading(1_074_000, pending: 50_000, kernel: nil), now: 14) == 12_000, "well under its pacing: the link held it")
        links.forget("a")
        #expect(links.rate(of: "a", reading(2_000_000, pending: 0, kernel: 42_000), now: 15) == nil, "a connection that left is forgotten")
    }

    /// A socket is told its pacing only when it changes by a tenth or more, or starts or stops; a connection that
    /// left is forgotten.
    @Test func aSocketIsToldItsPacingOnlyWhenItMoves() {
        var links = SubscriberLinks()
        var rates: [String: Double] = ["a": 30_000]
        func changes() -> [String] { links.changes(for: ["a", "b"], rate: { rates[$0] }).map { "\($0.id)=\($0.rate.map { Int($0) } ?? -1)" } }
        #expect(changes() == ["a=30000"], "a starts being paced; b is not")
        rates["a"] = 32_000
        #expect(changes().isEmpty, "under a tenth: left as it is")
        rates["a"] = 40_000
        rates["b"] = 10_000
        #expect(changes() == ["a=40000", "b=10000"])
        rates["a"] = nil
        #expect(changes() == ["a=-1"], "a is no longer paced")
        #expect(changes().isEmpty)
        links.forget("b")
        #expect(changes() == ["b=10000"], "b joined again: told afresh")
    }
}
