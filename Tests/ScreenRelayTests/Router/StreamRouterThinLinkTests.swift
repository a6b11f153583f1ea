import ScreenMedia
import ScreenRelay
import ScreenWire
import Testing

/// The router with links of different speeds: simulated ones (``SimulatedLink``, ``KernelLink``, and the
/// fast-and-slow runs of ``ThinLinkSimulation``), the slow subscriber thinned, fitted in and restarted.
extension StreamRouterTests {
    /// A subscriber's link, simulated: it takes the frames the router sends it one after the other at
    /// `bytesPerSecond`, and reports each delivery when its last byte has left.
    struct SimulatedLink {
        let subscriber: String
        let bytesPerSecond: Double
        var queue: [(name: String, bytes: Int)] = []
        var busyUntil = 0.0
        var received: [String] = []
        /// When each of ``received`` arrived.
        var arrivals: [Double] = []

        /// Takes the frames `actions` send it, at `now`.
        mutating func take(_ actions: [Router.Action], sizes: [String: Int], now: Double) {
            for case .sendFrame(let frame, subscriber, _, _, _) in actions {
                if queue.isEmpty { busyUntil = max(busyUntil, now) }
                queue.append((frame, sizes[frame] ?? 0))
            }
        }

        /// Delivers what the link has carried by `now`, telling the router; returns what the router answered.
        mutating func advance(to now: Double, router: inout Router, sizes: [String: Int]) -> [Router.Action] {
            var actions: [Router.Action] = []
            while let first = queue.first, busyUntil + Double(first.bytes) / bytesPerSecond <= now {
                busyUntil += Double(first.bytes) / bytesPerSecond
                queue.removeFirst()
                received.append(first.name)
                arrivals.append(busyUntil)
                let answered = router.frameDelivered(to: subscriber, streamId: 1, now: busyUntil)
                take(answered, sizes: sizes, now: busyUntil)
                actions += answered
            }
            return actions
        }
    }

    /// The temporal layer of frame `n` of an L1T3 stream (0, 2, 1, 2, …).
    static func layer(of n: Int) -> Int { [0, 2, 1, 2][n % 4] }

    /// A slow subscriber beside a fast one: it loses higher layers, never layer 0, and is told so; the fast one
    /// gets every frame, and nobody asks the publisher for a keyframe.
    @Test func aSlowSubscriberIsThinnedToTheLayersItsLinkCarries() {
        // 5 fps of 4 KB layer-0 and 2 KB other frames: ~13 KB/s; the slow link carries 7 KB/s.
        let run = ThinLinkSimulation.run(
            ThinLinkSimulation.steady(seconds: 30, layerZeroBytes: 4_000), until: 30, discardableLayers: false, slowBytesPerSecond: 7_000,
            tickEvery: 0.01, sampleEvery: nil, answersKeyframeRequests: true)
        #expect(run.fast.count == 150, "the fast subscriber got every frame")
        #expect(run.keyframeRequests == 0, "layer 0 fits the slow link: no keyframe for anyone")
        // What was sent to it: received, or still on its way when the run ended.
        let slowLayers = (run.slowLink.received + run.slowLink.queue.map(\.name)).map { Int($0.split(separator: "/")[1])! }
        #expect(slowLayers.filter { $0 == 0 }.count == 38, "every layer-0 frame went to the slow subscriber")
        #expect(slowLayers.count < 110 && run.router.counters.thinnedFrames > 30, "it was thinned: \(slowLayers.count) frames")
        #expect(run.slowControls.contains { if case .subscriptionChanged(1, let layer, 3, false) = $0 { layer < 2 } else { false } })
        #expect(run.router.highestLayer(for: "fast", streamId: 1) == 2)
    }

    /// A subscriber's link as the relay sees a real one: its socket takes each frame at once (the delivery is
    /// reported when written), the bytes then wait in the kernel, and the router learns of them only from
    /// `TCP_INFO` every 0.5 s: the bytes not yet carried, and a delivery rate while the link was busy — which,
    /// behind a token bucket that lets bursts through at the line's rate, is every other time several times
    /// what the link carries (`burstFactor`).
    struct KernelLink {
        let subscriber: String
        let bytesPerSecond: Double
        var burstFactor = 5.0
        var pending = 0.0
        var busy = false
        var lastSample = 0.0
        var samples = 0

        mutating func take(_ actions: [Router.Action], router: inout Router, sizes: [String: Int], now: Double) {
            var actions = actions
            while !actions.isEmpty {
                var answered: [Router.Action] = []
                for case .sendFrame(let frame, subscriber, _, _, _) in actions {
                    pending += Double(sizes[frame] ?? 0)
                    busy = true
                    answered += router.frameDelivered(to: subscriber, streamId: 1, now: now)
                }
                actions = answered
            }
        }

        mutating func advance(by seconds: Double, router: inout Router, now: Double) {
            pending = max(0, pending - bytesPerSecond * seconds)
            guard now - lastSample >= 0.5 else { return }
            samples += 1
            let measured = samples % 2 == 0 ? bytesPerSecond * burstFactor : bytesPerSecond
            router.linkMeasured(subscriber, deliveryBytesPerSecond: busy ? measured : nil, pendingBytes: Int(pending), now: now)
            lastSample = now
            busy = pending > 0
        }
    }

    /// A layer comes back by what the link was measured to carry at its lowest of late, not by measures that run
    /// high: a 24 KB/s subscriber of a stream of 6 KB frames at 5 fps (30 KB/s in all; layers 0–1, 15 KB/s, fit)
    /// goes to layers 0–1 and stays there but for the probes, where the mean of its link's measures would raise
    /// it to layer 2 again and again, and fill its queue each time.
    @Test func aLayerComesBackByTheLinksLowestMeasureNotItsBursts() {
        var router = sessionWithStream(subscribers: ["slow"])
        _ = router.handle(.subscribe(streamId: 1, layers: true), from: "slow", now: 0)
        var link = KernelLink(subscriber: "slow", bytesPerSecond: 24_000)
        var sizes: [String: Int] = [:]
        var layers: [Int] = []
        var now = 0.0
        for n in 0..<300 {
            let name = "f\(n)"
            sizes[name] = 6_000
            let actions = router.frame(name, header: header(1, UInt64(n), key: n == 0, layer: n == 0 ? 0 : Self.layer(of: n)), size: 6_000, from: "p", now: now)
            link.take(actions, router: &router, sizes: sizes, now: now)
            layers += controls(actions, to: "slow").compactMap { if case .subscriptionChanged(1, let layer, 3, _) = $0 { layer } else { nil } }
            for _ in 0..<20 {
                now += 0.01
                link.advance(by: 0.01, router: &router, now: now)
                let ticked = router.tick(now: now)
                link.take(ticked, router: &router, sizes: sizes, now: now)
            }
        }
        // Raised again only by the probes, which come ever more rarely (9 s, then 18 s): judged by the mean of its
        // measures it went up seven times in the minute.
        #expect(layers.first.map { $0 < 2 } == true && layers.filter { $0 == 2 }.count <= 2, "layers it was given: \(layers)")
    }

    /// Layers come back once the subscriber's link carries them: a link that is slow only for a while.
    @Test func layersComeBackWhenTheLinkRecovers() {
        var router = sessionWithStream(subscribers: ["v"], limits: .init(raiseAfterSeconds: 2))
        _ = router.handle(.subscribe(streamId: 1, layers: true), from: "v", now: 0)
        var link = SimulatedLink(subscriber: "v", bytesPerSecond: 4_000)
        var sizes: [String: Int] = [:]
        var now = 0.0
        var lowest = MediaFrameHeader.Flags.highestLayer
        for n in 0..<150 {
            if n == 50 { link = SimulatedLink(subscriber: "v", bytesPerSecond: 1_000_000, queue: link.queue, busyUntil: link.busyUntil) }
            let name = "f\(n)"
            sizes[name] = 1_000
            let actions = router.frame(name, header: header(1, UInt64(n), key: n == 0, layer: n == 0 ? 0 : Self.layer(of: n)), size: 1_000, from: "p", now: now)
            link.take(actions, sizes: sizes, now: now)
            for _ in 0..<20 {
                now += 0.01
                link.take(link.advance(to: now, router: &router, sizes: sizes), sizes: sizes, now: now)
            }
            if n == 49 { lowest = router.highestLayer(for: "v", streamId: 1)! }
        }
        #expect(lowest < 2, "5 KB/s of frames on a 4 KB/s link: thinned")
        #expect(router.highestLayer(for: "v", streamId: 1) == 2, "every layer back once the link is fast")
    }

    /// A link too slow even for layer 0 skips to keyframes, asking for them at most once per its own interval,
    /// and keeps getting pictures; the fast subscriber still gets every frame.
    @Test func aLinkTooSlowForLayerZeroAsksForKeyframesWithinItsOwnCeiling() {
        let run = ThinLinkSimulation.run(
            ThinLinkSimulation.steady(seconds: 30, layerZeroBytes: 4_000), until: 30, discardableLayers: false, slowBytesPerSecond: 3_000,
            tickEvery: 0.01, sampleEvery: nil, answersKeyframeRequests: true,
            limits: .init(subscriberKeyframeIntervalSeconds: 4, subscriberKeyframeCeilingSeconds: 0))
        #expect(run.keyframeRequests >= 1 && run.keyframeRequests <= 8, "\(run.keyframeRequests) keyframe requests in 30 s")
        #expect(run.slow.count >= 8, "the slow subscriber kept getting pictures: \(run.slow.map(\.name))")
        #expect(run.fast.count == 150)
        #expect(run.slowControls.contains(.subscriptionChanged(streamId: 1, highestLayer: 0, layers: 3, waitingForKeyframe: true)))
    }

    /// Page flips twice a second, L1T3, layer-0 frames of 25 KB (the keyframe 60 KB) and the others of 14 KB, to a
    /// fast subscriber and one whose link carries 31 KB/s (250 kbit/s: a layer-0 frame is 0.8 s of it), which the
    /// kernel measures every 0.5 s while it is busy. Returns, for the slow one, each frame it got with when it was
    /// sent by the publisher and when it arrived (``ThinLinkSimulation``).
    func runPageFlips(discardableLayers: Bool) -> (slow: [(name: String, sent: Double, arrived: Double)], fast: Int, keyframeRequests: Int) {
        let run = ThinLinkSimulation.run(
            ThinLinkSimulation.pageFlips(count: 120), until: 60, discardableLayers: discardableLayers, tickEvery: 0.01, sampleEvery: 0.5)
        return (run.slow, run.fast.count, run.keyframeRequests)
    }

    /// A subscriber thinned to layer 0 of a stream whose upper layers are discardable still gets the frames of
    /// the layers above that its link has room for before the next layer-0 frame: more pictures, shorter freezes,
    /// and no layer-0 frame later than without them; the fast subscriber gets every frame either way.
    @Test func aThinnedSubscriberGetsTheUpperFramesItsLinkHasRoomFor() {
        let layered = runPageFlips(discardableLayers: false)
        let fitted = runPageFlips(discardableLayers: true)
        #expect(layered.fast == 120 && fitted.fast == 120)
        #expect(layered.keyframeRequests == 0 && fitted.keyframeRequests == 0)
        func layerZero(_ frames: [(name: String, sent: Double, arrived: Double)]) -> [(name: String, sent: Double, arrived: Double)] {
            frames.filter { $0.name.hasSuffix("/0") }
        }
        // After the first 10 s, once the subscriber has been thinned.
        func settled(_ frames: [(name: String, sent: Double, arrived: Double)]) -> [(name: String, sent: Double, arrived: Double)] {
            frames.filter { $0.sent >= 10 }
        }
        #expect(layerZero(fitted.slow).map(\.name) == layerZero(layered.slow).map(\.name), "every layer-0 frame, either way")
        let upper = settled(fitted.slow).count { !$0.name.hasSuffix("/0") }
        #expect(settled(layered.slow).allSatisfy { $0.name.hasSuffix("/0") }, "without discardable layers: layer 0 only")
        // Of each three frames above layer 0 the first two fit; the third would still be on its way when the next
        // layer-0 frame comes.
        #expect(upper >= 30, "frames above layer 0 that fitted in 50 s: \(upper)")
        func longestGap(_ frames: [(name: String, sent: Double, arrived: Double)]) -> Double {
            let times = settled(frames).map(\.arrived)
            return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .infinity
        }
        #expect(longestGap(fitted.slow) < longestGap(layered.slow) - 0.3, "freezes: \(longestGap(fitted.slow)) s against \(longestGap(layered.slow)) s")
        let lateness = zip(settled(layerZero(fitted.slow)), settled(layerZero(layered.slow))).map { $0.arrived - $1.arrived }
        #expect(lateness.allSatisfy { $0 < 0.05 }, "layer-0 frames delayed by the fitted ones: \(lateness.filter { $0 >= 0.05 })")
    }
}
