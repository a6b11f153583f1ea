import ScreenMedia
@testable import ScreenRelay
import ScreenWire
import ScreenTesting
import Testing

/// What the router does with a publisher's impossible times and a subscriber's keyframe requests: pure, no sockets.
@Suite(.watchdog()) struct HostileInputPolicyTests {
    typealias Router = StreamRouter<String>
    static let properties = StreamProperties(
        codec: .vp9, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1)

    func header(_ sequence: UInt64, key: Bool, time: MediaTime? = nil) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: 1, sequence: sequence, flags: key ? .keyframe : [], codec: .vp9, width: 1280, height: 720,
            captureTime: time ?? MediaTime(value: Int64(sequence), timescale: 5), wallClockMilliseconds: 0, metadata: .empty,
            payloadLength: 10)
    }

    func frames(_ actions: [Router.Action], to connection: String) -> [String] {
        actions.compactMap { if case .sendFrame(let frame, connection, _, _, _) = $0 { frame } else { nil } }
    }

    func keyframeRequests(_ actions: [Router.Action]) -> Int {
        actions.count { if case .sendControl(.requestKeyframe, "p") = $0 { true } else { false } }
    }

    func session(subscribers: [String]) -> Router {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: Self.properties), from: "p", now: 0)
        for subscriber in subscribers {
            _ = router.connect(ConnectionInfo(connectionId: subscriber, role: .subscriber, data: ""))
            _ = router.handle(.subscribe(streamId: 1), from: subscriber, now: 0)
        }
        return router
    }

    // MARK: Capture times

    @Test func aTimelineRefusesTimesThatGoBackOrRunAheadOfTheRelaysClock() {
        var timeline = CaptureTimeline()
        let second = MediaTime(value: 1, timescale: 1)
        #expect(timeline.admit(second, kind: .video, now: 100) == .accepted)
        #expect(timeline.admit(second, kind: .video, now: 100.2) == .accepted, "the same time again: a keepalive")
        #expect(timeline.admit(MediaTime(value: 0, timescale: 1), kind: .video, now: 100.2) == .earlier(previous: second))
        // Audio keeps its own order on the same clock.
        #expect(timeline.admit(MediaTime(value: 990, timescale: 1000), kind: .audio, now: 100.2) == .accepted)
        // 62 s of capture time in 1 s of the relay's: ahead by more than 60 s.
        guard case .runsAhead(let lead) = timeline.admit(MediaTime(value: 63, timescale: 1), kind: .video, now: 101) else {
            Issue.record("a leap of a minute was accepted")
            return
        }
        #expect(lead > 60.9 && lead < 61.1)
        // A pause of ten minutes on both clocks is no leap.
        #expect(timeline.admit(MediaTime(value: 601, timescale: 1), kind: .video, now: 700) == .accepted)
    }

    @Test func aFrameOutOfTimeIsRefusedOnceToldAndTheStreamGoesOn() {
        var router = session(subscribers: ["v"])
        let first = router.receive("k0", header: header(0, key: true), size: 10, from: "p", now: 0)
        #expect(first.admitted && frames(first.actions, to: "v") == ["k0"])
        let far = MediaTime(value: Int64(1) << 59, timescale: MediaTime.nanosecondTimescale)
        var errors = 0
        for sequence in 1...5 {
            let refused = router.receive("x\(sequence)", header: header(UInt64(sequence), key: false, time: far), size: 10, from: "p", now: 0.2)
            #expect(!refused.admitted && frames(refused.actions, to: "v").isEmpty)
            errors += refused.actions.count { if case .sendControl(.error(.malformed, _), "p") = $0 { true } else { false } }
        }
        #expect(errors == 1, "the publisher is told once for a run of refused frames")
        let back = router.receive("b", header: header(9, key: false, time: MediaTime(value: -1, timescale: 5)), size: 10, from: "p", now: 0.3)
        #expect(!back.admitted)
        let next = router.receive("d1", header: header(1, key: false), size: 10, from: "p", now: 0.4)
        #expect(next.admitted && frames(next.actions, to: "v") == ["d1"])
        #expect(router.counters.refused[.captureTime] == 6)
    }

    // MARK: Keyframe requests

    @Test func aSubscribersRequestsAreServedWithinItsAllowanceThenWaitThenClose() {
        var requests = SubscriberKeyframeRequests(requests: 3, perSeconds: 10, closeAfter: 5)
        #expect([requests.asked(now: 0), requests.asked(now: 0), requests.asked(now: 0)] == [.serve, .serve, .serve])
        #expect(requests.asked(now: 0.25) == .wait)
        let early = requests.takeWaiting(now: 1)
        #expect(!early, "the allowance comes back at 0.3 a second")
        let later = requests.takeWaiting(now: 3.5)
        #expect(later, "a waiting request is served once it has")
        #expect(!requests.waiting)
        // Served late, it does not clear what was ignored: one more (2 so far) and three after it make 5.
        #expect([requests.asked(now: 3.6), requests.asked(now: 3.6), requests.asked(now: 3.6)] == [.wait, .wait, .wait])
        #expect(requests.asked(now: 3.7) == .close)
        // Back within its allowance, a subscriber starts afresh.
        var calm = SubscriberKeyframeRequests(requests: 3, perSeconds: 10, closeAfter: 2)
        _ = [calm.asked(now: 0), calm.asked(now: 0), calm.asked(now: 0)]
        #expect(calm.asked(now: 0) == .wait)
        let served = calm.takeWaiting(now: 4)
        #expect(served)
        #expect(calm.asked(now: 20) == .serve)
        #expect(calm.asked(now: 20) == .serve && calm.asked(now: 20) == .serve && calm.asked(now: 20) == .wait)
    }

    /// A subscriber that asks every 250 ms for a minute makes the publisher send no more keyframes than the
    /// stream's ceiling allows, and is closed; an honest viewer of the same stream gets no extra keyframe beyond
    /// those, nor any replay.
    @Test func aSpammingSubscriberCostsAnHonestViewerAtMostTheCeiling() {
        var router = session(subscribers: ["honest", "spam"])
        var time = 0.0
        var sequence: UInt64 = 0
        var requested = 0
        var keyframeDue = false
        var honestFrames: [String] = []
        var closed = false
        func frame(key: Bool) {
            keyframeDue = false
            let actions = router.frame(key ? "k\(sequence)" : "d\(sequence)", header: header(sequence, key: key), size: 20_000, from: "p", now: time)
            honestFrames += frames(actions, to: "honest")
            sequence += 1
            for delivered in ["honest", "spam"] {
                for _ in frames(actions, to: delivered) { _ = router.frameDelivered(to: delivered, streamId: 1, now: time) }
            }
        }
        frame(key: true)
        while time < 60 {
            time += 0.25
            // The publisher sends a frame twice a second, a keyframe when asked (as screenpub does).
            if Int(time * 4) % 2 == 0 { frame(key: keyframeDue) }
            if !closed {
                let actions = router.handle(.requestKeyframe(streamId: 1), from: "spam", now: time)
                requested += keyframeRequests(actions)
                keyframeDue = keyframeDue || keyframeRequests(actions) > 0
                if actions.contains(where: { if case .close("spam", .rateLimited, _) = $0 { true } else { false } }) {
                    closed = true
                    _ = router.disconnect("spam")
                }
            }
            let ticked = router.tick(now: time)
            requested += keyframeRequests(ticked)
            keyframeDue = keyframeDue || keyframeRequests(ticked) > 0
            for _ in frames(ticked, to: "honest") { _ = router.frameDelivered(to: "honest", streamId: 1, now: time) }
        }
        #expect(closed, "a subscriber that kept asking was closed")
        #expect(requested <= 2, "keyframes asked of the publisher for it: \(requested)")
        #expect(honestFrames.count == Set(honestFrames).count, "the honest viewer was sent no frame twice: \(honestFrames)")
        #expect(honestFrames.count { $0.hasPrefix("k") } <= 1 + 2, "the honest viewer's keyframes: \(honestFrames.filter { $0.hasPrefix("k") })")
        #expect((router.counters.refused[.keyframeRequests] ?? 0) >= 40)
    }

    @Test func theStreamCeilingHoldsKeyframesForSubscribersButNotTheRelaysOwn() {
        var router = session(subscribers: [])
        _ = router.frame("k0", header: header(0, key: true), size: 10, from: "p", now: 0)
        // The cache is gone (more than it may hold), so a joiner needs a keyframe.
        _ = router.frame("huge", header: header(1, key: false), size: 9 << 20, from: "p", now: 1)
        _ = router.connect(ConnectionInfo(connectionId: "late", role: .subscriber, data: ""))
        #expect(keyframeRequests(router.handle(.subscribe(streamId: 1), from: "late", now: 2)) == 0, "2 s after the last keyframe")
        #expect(keyframeRequests(router.tick(now: 29)) == 0)
        #expect(keyframeRequests(router.tick(now: 30.1)) == 1, "once the ceiling has passed, the waiting request goes")
        #expect(keyframeRequests(router.requestKeyframe(forStream: 1, now: 31)) == 1, "the relay's own request is not under it")
    }

    /// A recording starts from the cached pictures where there are some: archive starts (which a moderator may
    /// repeat) cost the viewers no keyframe then; a stream without them is asked for one.
    @Test func aRecordingStartsFromTheCacheAndAsksOnlyForStreamsWithout() {
        var router = session(subscribers: ["v"])
        _ = router.handle(.publish(name: "second", properties: Self.properties), from: "p", now: 0)
        _ = router.frame("k0", header: header(0, key: true), size: 10, from: "p", now: 0)
        _ = router.frame("d1", header: header(1, key: false), size: 10, from: "p", now: 0.5)
        let (cached, actions) = router.startingRecording(now: 1)
        #expect(cached.count == 1 && cached.first?.streamId == 1 && cached.first?.frames == ["k0", "d1"])
        #expect(actions.count { if case .sendControl(.requestKeyframe(streamId: 2), "p") = $0 { true } else { false } } == 1)
        #expect(keyframeRequests(actions) == 1)
    }
}
