import ScreenWire

@testable import ScreenRelay

/// A stream played through a router to a fast subscriber (10 MB/s) and a slow one over simulated links, the
/// clock advancing 10 ms at a time: the router is told what the kernel holds of the slow link every
/// `sampleEvery` seconds (its delivery rate only while the link was busy; nil: never), and ticked every
/// `tickEvery`. Frames are named "f<sequence>/<layer>"; the first is a keyframe, and with
/// `answersKeyframeRequests` so is the first after the publisher was asked for one.
struct ThinLinkSimulation {
    typealias Router = StreamRouterTests.Router

    struct Frame {
        var at: Double
        var layer: Int
        var bytes: Int
        /// What it weighs when it is sent as a keyframe.
        var keyframeBytes: Int
    }

    struct Outcome {
        /// What the slow subscriber got: each frame's name, when it was sent, when it arrived.
        var slow: [(name: String, sent: Double, arrived: Double)]
        var fast: [String]
        var keyframeRequests: Int
        var router: Router
        /// The slow link as the run left it (what it got, what was still on its way), and what it was told.
        var slowLink: StreamRouterTests.SimulatedLink
        var slowControls: [ControlMessage]
    }

    /// Page flips twice a second, L1T3 (0, 2, 1, 2, …): a 60 KB keyframe, then 25 KB layer-0 and 14 KB frames.
    static func pageFlips(count: Int) -> [Frame] {
        (0..<count).map { n in
            let layer = StreamRouterTests.layer(of: n)
            return Frame(at: Double(n) * 0.5, layer: layer, bytes: n == 0 ? 60_000 : layer == 0 ? 25_000 : 14_000, keyframeBytes: 60_000)
        }
    }

    /// `seconds` at 5 fps, L1T3: layer-0 frames of `layerZeroBytes`, the others half of it, keyframes twice it.
    static func steady(seconds: Int, layerZeroBytes: Int) -> [Frame] {
        (0..<(seconds * 5)).map { n in
            let layer = StreamRouterTests.layer(of: n)
            return Frame(
                at: Double(n) * 0.2, layer: layer, bytes: n == 0 ? 2 * layerZeroBytes : layer == 0 ? layerZeroBytes : layerZeroBytes / 2,
                keyframeBytes: 2 * layerZeroBytes)
        }
    }

    /// Bursts: every 2 s a 25 KB layer-0 frame, then three 14 KB frames 0.1 s apart (layers 2, 1, 2).
    static func bursts(seconds: Int) -> [Frame] {
        (0..<(seconds / 2)).flatMap { burst in
            [0, 2, 1, 2].enumerated().map { offset, layer in
                Frame(at: Double(burst) * 2 + Double(offset) * 0.1, layer: layer, bytes: layer == 0 ? 25_000 : 14_000, keyframeBytes: 60_000)
            }
        }
    }

    static func run(
        _ frames: [Frame], until end: Double, discardableLayers: Bool, catchUp: Bool = false, slowBytesPerSecond: Double = 31_000,
        tickEvery: Double, sampleEvery: Double?, answersKeyframeRequests: Bool = false, limits: Router.Limits = .init(),
        afterEachStep: (Router) -> Void = { _ in }
    ) -> Outcome {
        var router = StreamRouterTests().sessionWithStream(subscribers: ["fast", "slow"], limits: limits, discardableLayers: discardableLayers)
        _ = router.handle(.subscribe(streamId: 1, layers: true, catchUp: catchUp), from: "fast", now: 0)
        _ = router.handle(.subscribe(streamId: 1, layers: true, catchUp: catchUp), from: "slow", now: 0)
        var fast = StreamRouterTests.SimulatedLink(subscriber: "fast", bytesPerSecond: 10_000_000)
        var slow = StreamRouterTests.SimulatedLink(subscriber: "slow", bytesPerSecond: slowBytesPerSecond)
        var sizes: [String: Int] = [:]
        var sentAt: [String: Double] = [:]
        var keyframeRequests = 0
        var keyframeAsked = false
        var slowControls: [ControlMessage] = []
        var next = 0
        var now = 0.0, lastSample = 0.0, lastTick = 0.0
        // Counts the keyframe requests among `actions`, and keeps what the slow subscriber was told.
        func note(_ actions: [Router.Action]) {
            let asked = StreamRouterTests().controls(actions, to: "p").count { $0 == .requestKeyframe(streamId: 1) }
            keyframeRequests += asked
            keyframeAsked = keyframeAsked || asked > 0
            slowControls += StreamRouterTests().controls(actions, to: "slow")
        }
        while now < end - 1e-9 {
            while next < frames.count, frames[next].at <= now + 1e-6 {
                let key = next == 0 || (answersKeyframeRequests && keyframeAsked)
                keyframeAsked = false
                let (layer, bytes) = key && next > 0 ? (0, frames[next].keyframeBytes) : (frames[next].layer, frames[next].bytes)
                let name = "f\(next)/\(layer)"
                (sizes[name], sentAt[name]) = (bytes, now)
                let header = StreamRouterTests().header(1, UInt64(next), key: key, layer: layer)
                let actions = router.frame(name, header: header, size: bytes, from: "p", now: now)
                fast.take(actions, sizes: sizes, now: now)
                slow.take(actions, sizes: sizes, now: now)
                note(actions)
                next += 1
            }
            now += 0.01
            note(fast.advance(to: now, router: &router, sizes: sizes))
            note(slow.advance(to: now, router: &router, sizes: sizes))
            if let sampleEvery, now - lastSample >= sampleEvery - 1e-6 {
                router.linkMeasured("slow", deliveryBytesPerSecond: slow.queue.isEmpty ? nil : slow.bytesPerSecond, pendingBytes: 0, now: now)
                lastSample = now
            }
            if now - lastTick >= tickEvery - 1e-6 {
                let ticked = router.tick(now: now)
                fast.take(ticked, sizes: sizes, now: now)
                slow.take(ticked, sizes: sizes, now: now)
                note(ticked)
                lastTick = now
            }
            afterEachStep(router)
        }
        let slowFrames = zip(slow.received, slow.arrivals).map { (name: $0, sent: sentAt[$0] ?? .nan, arrived: $1) }
        return Outcome(
            slow: slowFrames, fast: fast.received, keyframeRequests: keyframeRequests, router: router, slowLink: slow, slowControls: slowControls)
    }
}
