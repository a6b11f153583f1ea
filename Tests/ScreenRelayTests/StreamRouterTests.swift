import ScreenMedia
@testable import ScreenRelay
import ScreenWire
import ScreenTesting
import Testing

/// The router as a state machine: events in, actions out, no sockets.
@Suite(.watchdog()) struct StreamRouterTests {
    typealias Router = StreamRouter<String>
    static let properties = StreamProperties(
        codec: .vp9, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1)

    func header(_ streamId: UInt32, _ sequence: UInt64, key: Bool, layer: Int = 0) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: streamId, sequence: sequence, flags: (key ? MediaFrameHeader.Flags.keyframe : []).union(.layer(layer)), codec: .vp9, width: 1280,
            height: 720, captureTime: MediaTime(value: Int64(sequence), timescale: 5), wallClockMilliseconds: 0,
            metadata: .empty, payloadLength: 10)
    }

    /// The frames each connection was sent, and the control messages, from a list of actions.
    func frames(_ actions: [Router.Action], to connection: String) -> [String] {
        actions.compactMap { if case .sendFrame(let frame, connection, _, _, _) = $0 { frame } else { nil } }
    }

    func controls(_ actions: [Router.Action], to connection: String) -> [ControlMessage] {
        actions.compactMap { if case .sendControl(let message, connection) = $0 { message } else { nil } }
    }

    /// A session with publisher "p" publishing stream 1 and the given subscribers connected.
    func sessionWithStream(subscribers: [String], limits: Router.Limits = .init(), discardableLayers: Bool = false) -> Router {
        var router = Router(sessionId: "s", limits: limits)
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: Self.properties, discardableLayers: discardableLayers), from: "p", now: 0)
        for subscriber in subscribers {
            _ = router.connect(ConnectionInfo(connectionId: subscriber, role: .subscriber, data: ""))
        }
        // Their arrivals told, so that what follows is only what the test does.
        _ = router.flushMembership(now: 0)
        return router
    }

    @Test func welcomeAndAnnouncements() {
        var router = Router(sessionId: "s")
        let first = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: "name=Ada"))
        #expect(controls(first, to: "p") == [.welcome(connectionId: "p", sessionId: "s", role: .publisher, streams: [], connections: [])])
        let published = router.handle(.publish(name: "screen", properties: Self.properties), from: "p", now: 0)
        let stream = StreamInfo(streamId: 1, connectionId: "p", name: "screen", properties: Self.properties)
        #expect(controls(published, to: "p") == [.published(stream)])
        let second = router.connect(ConnectionInfo(connectionId: "v", role: .subscriber, data: ""))
        #expect(controls(second, to: "v") == [
            .welcome(connectionId: "v", sessionId: "s", role: .subscriber, streams: [stream],
                     connections: [ConnectionInfo(connectionId: "p", role: .publisher, data: "name=Ada")])
        ])
        // Arrivals and departures are told on the next tick (once a second at most).
        #expect(controls(second, to: "p").isEmpty)
        #expect(controls(router.tick(now: 1), to: "p") == [.connectionCreated(ConnectionInfo(connectionId: "v", role: .subscriber, data: ""))])
        let gone = router.disconnect("p")
        #expect(controls(gone, to: "v") == [.streamDestroyed(streamId: 1, reason: "disconnected")])
        #expect(controls(router.tick(now: 2), to: "v") == [.connectionDestroyed(connectionId: "p")])
        #expect(router.streamInfos.isEmpty)
    }

    /// Connections that come and go within a second cost the members nothing; each member is told only what it does
    /// not know (a joiner's welcome lists who was there), and at most once a second.
    @Test func joinsAndLeavesAreToldOnceASecondAndChurnCancelsOut() {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "m", role: .moderator, data: ""))
        _ = router.tick(now: 0)
        // 100 connections join and leave between two ticks: the moderator hears nothing of them.
        for index in 0..<100 {
            _ = router.connect(ConnectionInfo(connectionId: "c\(index)", role: .subscriber, data: ""))
            _ = router.disconnect("c\(index)")
        }
        // "a" joins, then "b" (whose welcome lists "a"), then "a" leaves, all within the second.
        _ = router.connect(ConnectionInfo(connectionId: "a", role: .subscriber, data: ""))
        _ = router.connect(ConnectionInfo(connectionId: "b", role: .subscriber, data: ""))
        _ = router.disconnect("a")
        #expect(router.tick(now: 0.5).isEmpty, "told before the second was over")
        let told = router.tick(now: 1.1)
        #expect(controls(told, to: "m") == [.connectionCreated(ConnectionInfo(connectionId: "b", role: .subscriber, data: ""))])
        #expect(controls(told, to: "b") == [.connectionDestroyed(connectionId: "a")])
        // Once announced, a departure is told to those who were told of the arrival.
        _ = router.disconnect("b")
        #expect(controls(router.tick(now: 2.2), to: "m") == [.connectionDestroyed(connectionId: "b")])
    }

    @Test func aRepeatedSubscribeIsANoOpAndReplaysNothing() {
        var router = sessionWithStream(subscribers: ["v"])
        _ = router.frame("k0", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        _ = router.frame("d1", header: header(1, 1, key: false), size: 10, from: "p", now: 0)
        let first = router.handle(.subscribe(streamId: 1), from: "v", now: 0)
        #expect(frames(first, to: "v") == ["k0", "d1"])
        for _ in 0..<100 { #expect(router.handle(.subscribe(streamId: 1), from: "v", now: 0).isEmpty) }
        #expect(router.queuedFrames(for: "v", streamId: 1) == 2)
    }

    @Test func aSubscriberCannotPublish() {
        var router = sessionWithStream(subscribers: ["v"])
        let actions = router.handle(.publish(name: "x", properties: Self.properties), from: "v", now: 0)
        guard case .sendControl(.error(let code, _), "v")? = actions.first else {
            Issue.record("expected an error, got \(actions)")
            return
        }
        #expect(code == .forbidden)
        #expect(router.streamInfos.count == 1)
    }

    @Test func onlyTheOwnerChangesAStreamsPropertiesAndLateJoinersSeeThem() {
        var router = sessionWithStream(subscribers: ["v"])
        var paused = Self.properties
        paused.hasVideo = false
        let refused = router.handle(.streamPropertyChanged(streamId: 1, properties: paused), from: "v", now: 0)
        guard case .sendControl(.error(let code, _), "v")? = refused.first else {
            Issue.record("expected an error, got \(refused)")
            return
        }
        #expect(code == .notFound)
        let changed = router.handle(.streamPropertyChanged(streamId: 1, properties: paused), from: "p", now: 0)
        #expect(controls(changed, to: "v") == [.streamPropertyChanged(streamId: 1, properties: paused)])
        let late = router.connect(ConnectionInfo(connectionId: "late", role: .subscriber, data: ""))
        guard case .welcome(_, _, _, let streams, _, _)? = controls(late, to: "late").first else {
            Issue.record("no welcome")
            return
        }
        #expect(streams.first?.properties.hasVideo == false)
    }

    @Test func framesFanOutToEverySubscriber() {
        var router = sessionWithStream(subscribers: ["a", "b", "c"])
        for subscriber in ["a", "b", "c"] { _ = router.handle(.subscribe(streamId: 1), from: subscriber, now: 0) }
        let actions = router.frame("K0", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        for subscriber in ["a", "b", "c"] { #expect(frames(actions, to: subscriber) == ["K0"]) }
        let delta = router.frame("D1", header: header(1, 1, key: false), size: 10, from: "p", now: 0.2)
        for subscriber in ["a", "b", "c"] { #expect(frames(delta, to: subscriber) == ["D1"]) }
    }

    @Test func aNewSubscriberStartsWithTheCachedGroupOfPictures() {
        var router = sessionWithStream(subscribers: ["late"])
        _ = router.frame("K0", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        _ = router.frame("D1", header: header(1, 1, key: false), size: 10, from: "p", now: 0.2)
        _ = router.frame("D2", header: header(1, 2, key: false), size: 10, from: "p", now: 0.4)
        let actions = router.handle(.subscribe(streamId: 1), from: "late", now: 0.5)
        #expect(controls(actions, to: "late") == [.subscribed(streamId: 1)])
        #expect(frames(actions, to: "late") == ["K0", "D1", "D2"])
        #expect(controls(actions, to: "p").isEmpty, "no keyframe request needed")
        #expect(frames(router.frame("D3", header: header(1, 3, key: false), size: 10, from: "p", now: 0.6), to: "late") == ["D3"])
    }

    @Test func withoutAUsableCacheANewSubscriberWaitsForARequestedKeyframe() {
        var router = sessionWithStream(subscribers: ["v"], limits: .init(subscriberKeyframeCeilingSeconds: 0, maximumCachedBytes: 25))
        _ = router.frame("K0", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        _ = router.frame("D1", header: header(1, 1, key: false), size: 10, from: "p", now: 0.2)
        _ = router.frame("D2", header: header(1, 2, key: false), size: 10, from: "p", now: 0.4)  // 30 bytes: cache dropped
        let actions = router.handle(.subscribe(streamId: 1), from: "v", now: 1)
        #expect(frames(actions, to: "v").isEmpty)
        #expect(controls(actions, to: "p") == [.requestKeyframe(streamId: 1)])
        #expect(frames(router.frame("D3", header: header(1, 3, key: false), size: 10, from: "p", now: 1.1), to: "v").isEmpty)
        #expect(frames(router.frame("K4", header: header(1, 4, key: true), size: 10, from: "p", now: 1.2), to: "v") == ["K4"])
    }

    /// A subscriber that stops reading gets what fits its bound in time, then nothing: it neither holds back the
    /// healthy one nor makes the publisher send keyframes (it would only ask once it had drained), and it is
    /// evicted once it has taken nothing for the stall limit.
    @Test func aStalledSubscriberIsCutOffWithoutHoldingBackAHealthyOne() {
        var router = sessionWithStream(subscribers: ["stalled", "healthy"], limits: .init(maximumQueuedMilliseconds: 1000, stallSeconds: 20))
        _ = router.frame("K", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        _ = router.handle(.subscribe(streamId: 1), from: "stalled", now: 0)
        _ = router.handle(.subscribe(streamId: 1), from: "healthy", now: 0)
        _ = router.frameDelivered(to: "healthy", streamId: 1, now: 0)
        var stalledFrames: [String] = []
        var healthyFrames: [String] = []
        var keyframeRequests = 0
        for sequence in 1...100 {
            let now = Double(sequence) * 0.05
            let name = "D\(sequence)"
            let actions = router.frame(name, header: header(1, UInt64(sequence), key: false), size: 10, from: "p", now: now)
            stalledFrames += frames(actions, to: "stalled")
            healthyFrames += frames(actions, to: "healthy")
            keyframeRequests += controls(actions, to: "p").count
            keyframeRequests += controls(router.tick(now: now), to: "p").count
            // The healthy subscriber writes everything out at once; the stalled one never does.
            for _ in frames(actions, to: "healthy") { _ = router.frameDelivered(to: "healthy", streamId: 1, now: now) }
        }
        #expect(healthyFrames.count == 100, "the healthy subscriber got every frame")
        #expect(stalledFrames.count == 20, "the stalled one got what its bound holds: 1 s after the keyframe it still had")
        #expect(keyframeRequests == 0, "a subscriber that has not drained asks for no keyframe")
        let evicted = router.tick(now: 20.5)
        guard case .evict("stalled", let reason)? = evicted.first else {
            Issue.record("expected the stalled subscriber to be evicted, got \(evicted)")
            return
        }
        #expect(reason.contains("20 s"))
        #expect(router.subscriberCount(of: 1) == 1 && router.counters.evictedSubscribers == 1)
    }

    /// A subscriber that takes nothing and subscribes again and again (within the subscription allowance) is
    /// evicted at the stall limit from when it first took nothing, not from its latest subscription; one that takes
    /// a frame between its subscriptions starts afresh.
    @Test(arguments: [false, true])
    func subscribingAgainDoesNotRestartTheStallLimit(takesAFrameBetween: Bool) {
        var router = sessionWithStream(subscribers: ["churner"], limits: .init(maximumQueuedMilliseconds: 60_000, stallSeconds: 20))
        _ = router.frame("K", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        _ = router.handle(.subscribe(streamId: 1), from: "churner", now: 0)
        var evictedAt: Double?
        for sequence in 1...300 where evictedAt == nil {
            let now = Double(sequence) * 0.1
            _ = router.frame("D\(sequence)", header: header(1, UInt64(sequence), key: false), size: 10, from: "p", now: now)
            if sequence % 20 == 0 {
                // Every 2 s: unsubscribe and subscribe again (the cached pictures are queued for it once more).
                _ = router.handle(.unsubscribe(streamId: 1), from: "churner", now: now)
                if takesAFrameBetween, sequence == 100 {
                    _ = router.handle(.subscribe(streamId: 1), from: "churner", now: now)
                    _ = router.frameDelivered(to: "churner", streamId: 1, now: now)
                    _ = router.handle(.unsubscribe(streamId: 1), from: "churner", now: now)
                }
                _ = router.handle(.subscribe(streamId: 1), from: "churner", now: now)
            }
            if router.tick(now: now).contains(where: { if case .evict("churner", _) = $0 { true } else { false } }) { evictedAt = now }
        }
        if takesAFrameBetween {
            // It took a frame at 10 s: 20 s from then.
            #expect(evictedAt.map { (29.9...30.5).contains($0) } == true, "evicted at \(String(describing: evictedAt))")
        } else {
            #expect(evictedAt.map { (19.9...20.5).contains($0) } == true, "evicted at \(String(describing: evictedAt))")
        }
    }

    func audioHeader(_ streamId: UInt32, _ sequence: UInt64) -> AudioFrameHeader {
        AudioFrameHeader(
            streamID: streamId, sequence: sequence, codec: .opus, channels: 2, samples: 960,
            captureTime: MediaTime(value: Int64(sequence), timescale: 50), wallClockMilliseconds: 0, isSilence: false, payloadLength: 80)
    }

    func audio(_ actions: [Router.Action], to connection: String) -> [String] {
        actions.compactMap { if case .sendAudio(let frame, connection, _) = $0 { frame } else { nil } }
    }

    @Test func audioGoesOnlyToSubscribersThatAskedAndNeverWaitsForAKeyframe() {
        var router = sessionWithStream(subscribers: ["old", "new"])
        _ = router.handle(.subscribe(streamId: 1), from: "old", now: 0)
        _ = router.handle(.subscribe(streamId: 1, audio: true), from: "new", now: 0)
        // No picture yet (both wait for a keyframe): the sound flows anyway, to the one that asked.
        let actions = router.audioFrame("a0", header: audioHeader(1, 0), from: "p", now: 0)
        #expect(audio(actions, to: "new") == ["a0"])
        #expect(audio(actions, to: "old").isEmpty)
        #expect(frames(actions, to: "new").isEmpty)
        // Someone else's stream: the sender is closed, as for video.
        _ = router.connect(ConnectionInfo(connectionId: "q", role: .publisher, data: ""))
        guard case .close("q", .notFound, _)? = router.audioFrame("x", header: audioHeader(1, 1), from: "q", now: 0).first else {
            Issue.record("audio for another's stream was not refused")
            return
        }
    }

    @Test func aStalledSubscriberLosesAudioFramesWithoutDelayingAHealthyOne() {
        var router = sessionWithStream(subscribers: ["stalled", "healthy"], limits: .init(maximumQueuedAudioFrames: 5))
        _ = router.handle(.subscribe(streamId: 1, audio: true), from: "stalled", now: 0)
        _ = router.handle(.subscribe(streamId: 1, audio: true), from: "healthy", now: 0)
        var stalled: [String] = []
        var healthy: [String] = []
        let keyframeRequests = router.counters.keyframeRequestsSent
        for sequence in 0..<50 {
            let actions = router.audioFrame("a\(sequence)", header: audioHeader(1, UInt64(sequence)), from: "p", now: 0)
            stalled += audio(actions, to: "stalled")
            healthy += audio(actions, to: "healthy")
            for _ in audio(actions, to: "healthy") { router.audioFrameDelivered(to: "healthy", streamId: 1) }
            // The stalled one takes one frame out now and then: it gets the next frame then, not a backlog.
            if sequence == 30 { router.audioFrameDelivered(to: "stalled", streamId: 1) }
        }
        #expect(healthy.count == 50)
        #expect(stalled == ["a0", "a1", "a2", "a3", "a4", "a31"])
        #expect(router.counters.droppedAudioFrames == 44)
        #expect(router.queuedAudioFrames(for: "stalled", streamId: 1) == 5)
        // Dropping sound asks for no keyframe.
        #expect(router.counters.keyframeRequestsSent == keyframeRequests)
    }

    /// One that fell behind past its bound resumes without a gap, never at a delta after one: once it has
    /// drained, with the frames it missed or the cached group when either is cheap, else with a keyframe asked
    /// for (once).
    @Test func aRecoveredSubscriberResumesAtAKeyframeNotAMidStreamDelta() {
        // (Without the stream's ceiling on keyframes for subscribers, which HostileInputPolicyTests covers.)
        var router = sessionWithStream(subscribers: ["v"], limits: .init(maximumQueuedMilliseconds: 300, subscriberKeyframeCeilingSeconds: 0))
        _ = router.handle(.subscribe(streamId: 1), from: "v", now: 0)
        var received: [String] = []
        received += frames(router.frame("K0", header: header(1, 0, key: true), size: 10, from: "p", now: 0), to: "v")
        received += frames(router.frame("D1", header: header(1, 1, key: false), size: 10, from: "p", now: 0.1), to: "v")
        // K0 has waited 0.4 s: D2 does not fit, and deltas after the gap are not sent.
        let overflow = router.frame("D2", header: header(1, 2, key: false), size: 15, from: "p", now: 0.4)
        #expect(frames(overflow, to: "v").isEmpty)
        #expect(controls(overflow, to: "p").isEmpty, "no keyframe before it has drained")
        received += frames(router.frame("D3", header: header(1, 3, key: false), size: 15, from: "p", now: 0.5), to: "v")
        // It catches up: what it missed (D2, D3: 30 bytes) and the cached group (K0…D3, 50 bytes) cost more than
        // twice the keyframe, so one is asked for.
        _ = router.frameDelivered(to: "v", streamId: 1, now: 0.6)
        let drained = router.frameDelivered(to: "v", streamId: 1, now: 0.6)
        #expect(controls(drained, to: "p") == [.requestKeyframe(streamId: 1)])
        #expect(frames(drained, to: "v").isEmpty)
        received += frames(router.frame("D4", header: header(1, 4, key: false), size: 10, from: "p", now: 0.7), to: "v")
        received += frames(router.frame("K5", header: header(1, 5, key: true), size: 10, from: "p", now: 0.8), to: "v")
        received += frames(router.frame("D6", header: header(1, 6, key: false), size: 10, from: "p", now: 0.9), to: "v")
        #expect(received == ["K0", "D1", "K5", "D6"])
        #expect(router.counters.keyframeRequestsByCause[.subscriberBehind] == 1)
    }

    /// When the frames a drained subscriber missed cost it less than twice a keyframe, it is sent them (and the
    /// publisher is asked for nothing): its decoder goes on from where it was, with no picture from before.
    @Test func aDrainedSubscriberRestartsFromTheFramesItMissed() {
        var router = sessionWithStream(subscribers: ["v"], limits: .init(maximumQueuedMilliseconds: 300))
        _ = router.handle(.subscribe(streamId: 1), from: "v", now: 0)
        _ = router.frame("K0", header: header(1, 0, key: true), size: 1000, from: "p", now: 0)
        _ = router.frame("D1", header: header(1, 1, key: false), size: 10, from: "p", now: 0.5)  // does not fit: skipped
        _ = router.frame("D2", header: header(1, 2, key: false), size: 10, from: "p", now: 0.6)
        let drained = router.frameDelivered(to: "v", streamId: 1, now: 0.7)
        #expect(frames(drained, to: "v") == ["D1", "D2"])
        #expect(controls(drained, to: "p").isEmpty)
        #expect(router.counters.catchUpsContinued == 1)
        #expect(frames(router.frame("D3", header: header(1, 3, key: false), size: 10, from: "p", now: 0.8), to: "v") == ["D3"])
    }

    @Test func keyframeRequestsAreThrottledAndHeldOnesGoOutOnTick() {
        var router = sessionWithStream(subscribers: ["v"], limits: .init(subscriberKeyframeCeilingSeconds: 0))
        _ = router.handle(.subscribe(streamId: 1), from: "v", now: 0)  // asks at t=0
        #expect(controls(router.handle(.requestKeyframe(streamId: 1), from: "v", now: 0.1), to: "p").isEmpty)
        #expect(controls(router.tick(now: 0.3), to: "p").isEmpty)
        #expect(controls(router.tick(now: 0.55), to: "p") == [.requestKeyframe(streamId: 1)])
        #expect(controls(router.tick(now: 0.7), to: "p").isEmpty, "nothing pending any more")
    }

    @Test func framesForAnotherConnectionsStreamCloseTheSender() {
        var router = sessionWithStream(subscribers: ["v"])
        let actions = router.frame("X", header: header(1, 0, key: true), size: 10, from: "v", now: 0)
        guard case .close("v", .notFound, _)? = actions.first else {
            Issue.record("expected close, got \(actions)")
            return
        }
        #expect(frames(router.frame("X", header: header(9, 0, key: true), size: 10, from: "p", now: 0), to: "v").isEmpty)
    }

    @Test func unpublishEndsTheStreamForEveryone() {
        var router = sessionWithStream(subscribers: ["v"])
        _ = router.handle(.subscribe(streamId: 1), from: "v", now: 0)
        let actions = router.handle(.unpublish(streamId: 1), from: "p", now: 1)
        #expect(controls(actions, to: "v") == [.streamDestroyed(streamId: 1, reason: "unpublished")])
        #expect(controls(actions, to: "p") == [.streamDestroyed(streamId: 1, reason: "unpublished")])
        #expect(router.subscriberCount(of: 1) == 0)
    }

    /// Subscribers from before protocol 3 get frames of higher layers with the layer bits cleared, and are told
    /// nothing about layers; those that read layers get the bits.
    @Test func olderSubscribersGetTheLayerBitsCleared() {
        var router = sessionWithStream(subscribers: ["old", "new"])
        _ = router.handle(.subscribe(streamId: 1), from: "old", now: 0)
        _ = router.handle(.subscribe(streamId: 1, layers: true), from: "new", now: 0)
        _ = router.frame("K", header: header(1, 0, key: true), size: 10, from: "p", now: 0)
        let actions = router.frame("D", header: header(1, 1, key: false, layer: 2), size: 10, from: "p", now: 0.2)
        var clearing: [String: Bool] = [:]
        for case .sendFrame(_, let to, _, let clears, _) in actions { clearing[to] = clears }
        #expect(clearing == ["old": true, "new": false])
    }

    /// A publisher that asks for acknowledgements gets one per video frame, with the relay's arrival time.
    @Test func publishersThatAskGetAnAcknowledgementPerFrame() {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.connect(ConnectionInfo(connectionId: "q", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: Self.properties, acks: true), from: "p", now: 0)
        _ = router.handle(.publish(name: "other", properties: Self.properties), from: "q", now: 0)
        let acked = router.frame("K", header: header(1, 7, key: true), size: 10, from: "p", now: 1.25)
        #expect(controls(acked, to: "p") == [.ack(streamId: 1, sequence: 7, receivedAt: 1250)])
        #expect(controls(router.frame("K", header: header(2, 0, key: true), size: 10, from: "q", now: 2), to: "q").isEmpty)
    }
}
