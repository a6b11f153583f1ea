import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

@testable import ScreenRelay

/// A subscriber brought back to the newest picture never sees the past as live: the cached pictures it needs go
/// as catch-up (decoded, not shown), the last one newer than anything it had; a catch-up its link would carry
/// more slowly than a fresh keyframe is not started.
@Suite struct CatchUpTests {
    typealias Router = StreamRouter<String>
    typealias Entry = CatchUpPlan.Entry

    /// The frames sent to `connection`, each with whether it went as catch-up.
    static func sent(_ actions: [Router.Action], to connection: String) -> [(frame: String, catchUp: Bool)] {
        actions.compactMap { if case .sendFrame(let frame, connection, _, _, let catchUp) = $0 { (frame, catchUp) } else { nil } }
    }

    static func header(_ sequence: UInt64, key: Bool, layer: Int = 0) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: 1, sequence: sequence, flags: (key ? MediaFrameHeader.Flags.keyframe : []).union(.layer(layer)), codec: .vp9,
            width: 1280, height: 720, captureTime: MediaTime(value: Int64(sequence), timescale: 5), wallClockMilliseconds: 0,
            metadata: .empty, payloadLength: 10)
    }

    static func session(_ limits: Router.Limits = .init()) -> Router {
        var router = Router(sessionId: "s", limits: limits)
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: .init(codec: .vp9, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 0)), from: "p", now: 0)
        _ = router.connect(ConnectionInfo(connectionId: "v", role: .subscriber, data: ""))
        return router
    }

    @Test func thePlanTakesTheCheaperWayAndEndsNewerThanWhatTheSubscriberHas() {
        let cache = [Entry(layer: 0, bytes: 100, arrival: 1), Entry(layer: 1, bytes: 5, arrival: 2), Entry(layer: 0, bytes: 10, arrival: 3), Entry(layer: 0, bytes: 10, arrival: 4)]
        // It had the keyframe and frame 2: the frames it missed (3, 4) are cheaper than the group.
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 1, lastSent: 2, maximumBytes: 200, bytesPerSecond: nil, freshPictureMilliseconds: 0)
            == CatchUpPlan(indices: [2, 3], bytes: 20, continues: true))
        // It never had this keyframe: the group, of its layers only.
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: 0, maximumBytes: 200, bytesPerSecond: nil, freshPictureMilliseconds: 0)
            == CatchUpPlan(indices: [0, 2, 3], bytes: 120, continues: false))
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: nil, maximumBytes: 200, bytesPerSecond: nil, freshPictureMilliseconds: 0)?.continues == false)
        // Nothing newer than what it has; over the byte bound; slower on its link than a fresh picture.
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: 4, maximumBytes: 200, bytesPerSecond: nil, freshPictureMilliseconds: 0) == nil)
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: 0, maximumBytes: 100, bytesPerSecond: nil, freshPictureMilliseconds: 0) == nil)
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: 0, maximumBytes: 200, bytesPerSecond: 100, freshPictureMilliseconds: 1000) == nil)
        #expect(CatchUpPlan.make(cache: cache, highestLayer: 0, lastSent: 0, maximumBytes: 200, bytesPerSecond: 1000, freshPictureMilliseconds: 1000) != nil)
        #expect(CatchUpPlan.make(cache: [], highestLayer: 3, lastSent: nil, maximumBytes: 200, bytesPerSecond: nil, freshPictureMilliseconds: 0) == nil)
    }

    /// A joiner and a subscriber that fell behind, both reading the flag: every frame of the catch-up but the
    /// last goes flagged; and over a long run of falling behind and restarting, no frame sent to be shown is
    /// older than one sent before it.
    @Test func noPictureSentToBeShownIsOlderThanOneTheSubscriberHas() {
        var router = Self.session(.init(maximumQueuedMilliseconds: 300, subscriberKeyframeIntervalSeconds: 0.5))
        _ = router.frame("0", header: Self.header(0, key: true), size: 100, from: "p", now: 0)
        _ = router.frame("1", header: Self.header(1, key: false, layer: 1), size: 10, from: "p", now: 0.1)
        _ = router.frame("2", header: Self.header(2, key: false), size: 10, from: "p", now: 0.2)
        let joined = Self.sent(router.handle(.subscribe(streamId: 1, layers: true, catchUp: true), from: "v", now: 0.25), to: "v")
        #expect(joined.map(\.frame) == ["0", "1", "2"] && joined.map(\.catchUp) == [true, true, false])
        var shown: [Int] = [2]
        var inFlight = joined.count
        // 40 s of a frame every 0.2 s (a keyframe every 10 s), the subscriber taking one frame a second.
        for sequence in 3..<200 {
            let now = Double(sequence) * 0.2
            var sent = Self.sent(
                router.frame("\(sequence)", header: Self.header(UInt64(sequence), key: sequence % 50 == 0, layer: sequence % 2), size: sequence % 50 == 0 ? 100 : 10, from: "p", now: now),
                to: "v")
            inFlight += sent.count
            if sequence % 5 == 0, inFlight > 0 {
                inFlight -= 1
                let restarted = Self.sent(router.frameDelivered(to: "v", streamId: 1, now: now + 0.01), to: "v")
                inFlight += restarted.count
                sent += restarted
            }
            for frame in sent where !frame.catchUp { shown.append(Int(frame.frame)!) }
        }
        #expect(shown == shown.sorted() && Set(shown).count == shown.count, "\(shown)")
        #expect(router.counters.catchUpsContinued > 0 && router.counters.catchUpsFromKeyframe > 0, "it fell behind and was brought back: \(shown) dropped \(router.counters.droppedFrames) requests \(router.counters.keyframeRequestsByCause)")
    }

    /// A subscriber whose decoder failed holds nothing to go on from: its request is served with the whole group
    /// from the cached keyframe, the publisher asked for nothing.
    @Test func aFailedDecoderIsServedTheWholeGroup() {
        var router = Self.session()
        _ = router.handle(.subscribe(streamId: 1, layers: true, catchUp: true), from: "v", now: 0)
        for sequence in 0..<3 {
            _ = router.frame("\(sequence)", header: Self.header(UInt64(sequence), key: sequence == 0), size: sequence == 0 ? 100 : 10, from: "p", now: Double(sequence) * 0.2)
            _ = router.frameDelivered(to: "v", streamId: 1, now: Double(sequence) * 0.2 + 0.05)
        }
        let served = router.handle(.requestKeyframe(streamId: 1), from: "v", now: 1)
        #expect(Self.sent(served, to: "v").map(\.frame) == ["0", "1", "2"])
        #expect(Self.sent(served, to: "v").map(\.catchUp) == [true, true, false])
        #expect(!served.contains { if case .sendControl(.requestKeyframe, "p") = $0 { true } else { false } })
    }

    /// Through a real relay: a joiner that asked for the flag gets the cached pictures flagged but the last; one
    /// that did not gets them as before, unflagged (it could not parse the bit).
    @Test func aJoinerThatAskedGetsTheCachedPicturesFlagged() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 3)
        let published = OneShotEvent()
        let publisher = Task {
            try await RelayClient.connect(transport: relay.server.inProcessTransport, token: session.token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events)
                try await link.send(frames, streamId: stream.streamId)
                published.signal()
                while try await events.next() != nil {}
            }
        }
        defer { publisher.cancel() }
        await published.wait(upTo: .seconds(20))
        try await Task.sleep(for: .milliseconds(200))
        /// The flags of the first three frames a joiner gets.
        func join(catchUp: Bool) async throws -> [Bool] {
            try await RelayClient.connect(url: relay.webSocketURL, token: viewerToken, logger: quietLogger) { link, events in
                guard case .welcome(_, _, _, let streams, _, _)? = try await events.nextControl(), let stream = streams.first else { return [] }
                try await link.send(.subscribe(streamId: stream.streamId, layers: true, catchUp: catchUp))
                var flags: [Bool] = []
                while flags.count < 3, let event = try await events.next() {
                    if case .media(let header, _) = event { flags.append(header.flags.isCatchUp) }
                }
                return flags
            }
        }
        #expect(try await join(catchUp: true) == [true, true, false])
        #expect(try await join(catchUp: false) == [false, false, false])
    }

    /// A publisher may not send what only the relay may mark.
    @Test func aPublishersCatchUpFlagClosesIt() {
        var router = Self.session()
        var header = Self.header(0, key: true)
        header.flags.insert(.catchUp)
        let (admitted, actions) = router.receive("0", header: header, size: 10, from: "p", now: 0)
        #expect(!admitted)
        guard case .close("p", .malformed, let reason)? = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(reason.contains("catch-up"))
    }
}
