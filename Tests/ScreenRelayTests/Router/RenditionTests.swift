import ScreenMedia
@testable import ScreenRelay
import ScreenWire
import ScreenTesting
import Testing

/// Renditions in the router: a subscriber gets the stream in a codec it decodes, the second encoding asked of the
/// publisher only while someone needs it.
@Suite(.watchdog()) struct RenditionTests {
    typealias Router = StreamRouter<String>
    static let av1 = StreamProperties(
        codec: .av1, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1,
        codecString: "av01.1.05M.08.0.000.06.06.06.0")
    static let h264 = StreamProperties(
        codec: .h264, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1, codecString: "avc1.42C01F")
    /// What the viewer page says in WebKit without AV1 and VP9 decoders: Constrained Baseline H.264 only.
    static let iPhone = ["avc1.42"]

    func header(_ streamId: UInt32, _ sequence: UInt64, key: Bool, codec: VideoCodec) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: streamId, sequence: sequence, flags: key ? .keyframe : [], codec: codec, width: 1280, height: 720,
            captureTime: MediaTime(value: Int64(sequence), timescale: 5), wallClockMilliseconds: 0, metadata: .empty, payloadLength: 10)
    }

    func controls(_ actions: [Router.Action], to connection: String) -> [ControlMessage] {
        actions.compactMap { if case .sendControl(let message, connection) = $0 { message } else { nil } }
    }

    func frames(_ actions: [Router.Action], to connection: String) -> [(frame: String, streamId: UInt32)] {
        actions.compactMap { if case .sendFrame(let frame, connection, let streamId, _, _) = $0 { (frame, streamId) } else { nil } }
    }

    /// Publisher "p" publishes stream 1 in AV1 4:4:4, offering an H.264 rendition; the subscribers are connected.
    func session(offers: [VideoCodec] = [.h264], subscribers: [String]) -> Router {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: Self.av1, renditions: offers), from: "p", now: 0)
        for subscriber in subscribers { _ = router.connect(ConnectionInfo(connectionId: subscriber, role: .subscriber, data: "")) }
        _ = router.flushMembership(now: 0)
        return router
    }

    @Test func aSubscriberThatDecodesTheStreamGetsItAndNoRenditionIsAsked() {
        var router = session(subscribers: ["chromium", "old"])
        let chromium = router.handle(.subscribe(streamId: 1, decodes: ["av01.1", "avc1.42"]), from: "chromium", now: 1)
        #expect(controls(chromium, to: "chromium") == [.subscribed(streamId: 1)])
        #expect(controls(chromium, to: "p") == [.requestKeyframe(streamId: 1)])
        // A subscriber from before renditions says nothing: it gets the stream as published.
        let old = router.handle(.subscribe(streamId: 1), from: "old", now: 1)
        #expect(controls(old, to: "old") == [.subscribed(streamId: 1)])
        #expect(router.renditions.rendition(of: 1) == nil && router.counters.renditionsAsked == 0)
    }

    @Test func aSubscriberThatDecodesOnlyH264GetsTheRenditionFromItsFirstKeyframe() {
        var router = session(subscribers: ["iphone", "ipad"])
        let asked = router.handle(.subscribe(streamId: 1, audio: true, decodes: Self.iPhone), from: "iphone", now: 1)
        #expect(controls(asked, to: "iphone") == [.subscribed(streamId: 1)])
        #expect(controls(asked, to: "p") == [.startRendition(streamId: 1, codec: .h264)])
        // Frames of the stream as published do not go to it.
        #expect(frames(router.frame("av1-key", header: header(1, 1, key: true, codec: .av1), size: 10, from: "p", now: 1.2), to: "iphone").isEmpty)

        let started = router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1.5)
        let rendition = StreamInfo(streamId: 2, connectionId: "p", name: "screen", properties: Self.h264, renditionOf: 1)
        #expect(controls(started, to: "p").first == .published(rendition))
        #expect(controls(started, to: "iphone") == [.renditionChanged(streamId: 1, rendition: rendition)])
        // Its subscriber waits for the rendition's first keyframe, asked of the publisher.
        #expect(controls(started, to: "p").contains(.requestKeyframe(streamId: 2)))
        let key = router.frame("h264-key", header: header(2, 1, key: true, codec: .h264), size: 10, from: "p", now: 1.7)
        #expect(frames(key, to: "iphone").map(\.frame) == ["h264-key"])
        #expect(frames(key, to: "iphone").map(\.streamId) == [2])
        // Renditions are not announced: the session still has one stream.
        #expect(router.streamInfos.map(\.streamId) == [1] && router.streamCount == 1)
        #expect(router.isRendition(2) && !router.isRendition(1))

        // A second such subscriber joins the running rendition from its cached keyframe, without asking again.
        let second = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "ipad", now: 2)
        #expect(controls(second, to: "ipad") == [.subscribed(streamId: 1), .renditionChanged(streamId: 1, rendition: rendition)])
        #expect(frames(second, to: "ipad").map(\.frame) == ["h264-key"])
        #expect(controls(second, to: "p").isEmpty)

        // Sound is shared: the stream's own audio frames reach the rendition's subscribers that asked for sound.
        let sound = AudioFrameHeader(
            streamID: 1, sequence: 1, codec: .opus, channels: 1, samples: 960, captureTime: MediaTime(value: 7, timescale: 5),
            wallClockMilliseconds: 0, isSilence: false, payloadLength: 4)
        let audio = router.audioFrame("opus", header: sound, from: "p", now: 2.1)
        #expect(audio.contains { if case .sendAudio("opus", "iphone", 2) = $0 { true } else { false } })
        #expect(!audio.contains { if case .sendAudio(_, "ipad", _) = $0 { true } else { false } })
        // Keyframe requests and unsubscribing name the stream; they reach the rendition that serves it.
        _ = router.handle(.requestKeyframe(streamId: 1), from: "ipad", now: 3)
        #expect(router.servingStream(of: "ipad", for: 1) == 2)
        let gone = router.handle(.unsubscribe(streamId: 1), from: "ipad", now: 3)
        #expect(gone.contains { if case .discardQueued("ipad", 2) = $0 { true } else { false } })
    }

    @Test func aRenditionNobodyNeedsStopsAfterItsLingerAndItsEndIsNotAnnounced() {
        var router = session(subscribers: ["iphone", "chromium"])
        _ = router.handle(.subscribe(streamId: 1, decodes: ["av01.1"]), from: "chromium", now: 0)
        _ = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 1)
        _ = router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1.5)
        _ = router.handle(.unsubscribe(streamId: 1), from: "iphone", now: 5)
        #expect(controls(router.tick(now: 5.1), to: "p").isEmpty)
        #expect(controls(router.tick(now: 5 + RenditionBook.lingerSeconds - 0.5), to: "p").isEmpty)
        let stop = router.tick(now: 5.2 + RenditionBook.lingerSeconds)
        #expect(controls(stop, to: "p") == [.stopRendition(streamId: 1, codec: .h264)])
        #expect(controls(router.tick(now: 20), to: "p").isEmpty, "asked once")
        let ended = router.handle(.unpublish(streamId: 2), from: "p", now: 21)
        #expect(controls(ended, to: "chromium").isEmpty)
        #expect(router.streamInfos.map(\.streamId) == [1] && router.renditions.rendition(of: 1) == nil)
        // The next subscriber that needs it asks for it again.
        let again = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 22)
        #expect(controls(again, to: "p") == [.startRendition(streamId: 1, codec: .h264)])
    }

    @Test func withoutARenditionInTimeTheSubscriberGetsTheStreamAsPublished() {
        var router = session(subscribers: ["iphone"])
        _ = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 1)
        _ = router.frame("av1-key", header: header(1, 1, key: true, codec: .av1), size: 10, from: "p", now: 1.1)
        #expect(frames(router.tick(now: 1 + RenditionBook.startSeconds - 0.1), to: "iphone").isEmpty)
        let late = router.tick(now: 1 + RenditionBook.startSeconds)
        #expect(frames(late, to: "iphone").map(\.frame) == ["av1-key"])
        #expect(router.servingStream(of: "iphone", for: 1) == 1)
    }

    @Test func aPublisherThatOffersNoRenditionLeavesTheSubscriberWithTheStream() {
        var router = session(offers: [], subscribers: ["iphone"])
        let subscribed = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 1)
        #expect(controls(subscribed, to: "iphone") == [.subscribed(streamId: 1)])
        #expect(controls(subscribed, to: "p") == [.requestKeyframe(streamId: 1)])
        #expect(router.servingStream(of: "iphone", for: 1) == 1)
    }

    @Test func theStreamsEndTakesItsRenditionAlongAndItsViewersAreToldOfTheStream() {
        var router = session(subscribers: ["iphone"])
        _ = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 1)
        _ = router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1.5)
        let gone = router.disconnect("p", now: 2)
        #expect(controls(gone, to: "iphone") == [.streamDestroyed(streamId: 1, reason: "disconnected")])
        #expect(router.streamCount == 0 && router.renditions.entries.isEmpty && router.renditions.primaryOf.isEmpty)
    }

    /// What a hostile or confused publisher may try: a rendition it did not offer, of a stream not its own, one
    /// nobody asked for, a second one, or one of a rendition; frames in another codec than its stream's. Each is
    /// refused with a sentence, and nothing else changes.
    @Test func renditionsArePublishedOnlyAsOfferedAskedAndOnePerStream() {
        var router = session(subscribers: ["v", "iphone"])
        _ = router.connect(ConnectionInfo(connectionId: "q", role: .publisher, data: ""))
        #expect(controls(router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "q", now: 1), to: "q")
            .contains { if case .error(.notFound, _) = $0 { true } else { false } })
        var vp9 = Self.h264
        vp9.codec = .vp9
        #expect(controls(router.handle(.publishRendition(streamId: 1, properties: vp9), from: "p", now: 1), to: "p")
            .contains { if case .error(.forbidden, _) = $0 { true } else { false } })
        #expect(controls(router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1), to: "p")
            .contains { if case .error(.forbidden, let message) = $0 { message.contains("has not asked") } else { false } })
        _ = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "iphone", now: 1)
        _ = router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1)
        #expect(router.renditions.rendition(of: 1)?.streamId == 2)
        #expect(controls(router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 1), to: "p")
            .contains { if case .error(.forbidden, _) = $0 { true } else { false } })
        #expect(controls(router.handle(.publishRendition(streamId: 2, properties: Self.h264), from: "p", now: 1), to: "p")
            .contains { if case .error(.forbidden, let message) = $0 { message.contains("is a rendition of stream 1") } else { false } })
        // A frame in another codec than its stream's goes to nobody, and its publisher is told.
        let wrong = router.frame("vp8", header: header(2, 1, key: true, codec: .vp8), size: 10, from: "p", now: 1.1)
        #expect(frames(wrong, to: "iphone").isEmpty)
        #expect(controls(wrong, to: "p").contains { if case .error(.malformed, let message) = $0 { message.contains("published in h264") } else { false } })
        #expect(router.counters.refused[.frameFormat] == 1)
        // Subscribing to a rendition's id directly: there is no such stream to subscribe to.
        #expect(controls(router.handle(.subscribe(streamId: 2), from: "v", now: 1), to: "v")
            .contains { if case .error(.notFound, _) = $0 { true } else { false } })
        // A subscriber's messages about renditions are the relay's to send.
        let forged = router.handle(.startRendition(streamId: 1, codec: .h264), from: "v", now: 1)
        #expect(forged.contains { if case .close("v", .unknownMessage, _) = $0 { true } else { false } })
        #expect(router.streamCount == 1)
    }

    /// Subscribers that come and go cannot make the relay ask a publisher for a rendition more than once every
    /// ``RenditionBook/askIntervalSeconds``.
    @Test func churningSubscribersAskForTheRenditionOnceAnInterval() {
        var router = session(subscribers: (0..<20).map { "v\($0)" })
        var asked = 0
        for index in 0..<20 {
            let actions = router.handle(.subscribe(streamId: 1, decodes: Self.iPhone), from: "v\(index)", now: Double(index) * 0.1)
            asked += controls(actions, to: "p").count
            _ = router.handle(.unsubscribe(streamId: 1), from: "v\(index)", now: Double(index) * 0.1 + 0.05)
        }
        #expect(asked == 1)
    }

    /// HLS's H.264 variant: while HLS reads it, the rendition is asked for (again each interval until it comes), runs
    /// without subscribers, and stops a linger after HLS stops reading it.
    @Test func hlsReadingTheH264VariantKeepsTheRenditionRunningAsIfSubscribed() {
        var router = session(subscribers: [])
        let asked = router.hlsReadsRendition(of: 1, codec: .h264, true, now: 1)
        #expect(controls(asked, to: "p") == [.startRendition(streamId: 1, codec: .h264)])
        #expect(controls(router.tick(now: 3), to: "p").isEmpty)
        #expect(controls(router.tick(now: 6.1), to: "p") == [.startRendition(streamId: 1, codec: .h264)])
        _ = router.handle(.publishRendition(streamId: 1, properties: Self.h264), from: "p", now: 7)
        // No subscriber, but HLS reads it: not stopped, however long.
        for second in stride(from: 8.0, through: 60, by: 1) {
            #expect(!controls(router.tick(now: second), to: "p").contains(.stopRendition(streamId: 1, codec: .h264)))
        }
        #expect(router.hlsReadsRendition(of: 1, codec: .h264, false, now: 61).isEmpty)
        #expect(!controls(router.tick(now: 61.1), to: "p").contains(.stopRendition(streamId: 1, codec: .h264)))
        #expect(!controls(router.tick(now: 70), to: "p").contains(.stopRendition(streamId: 1, codec: .h264)))
        #expect(controls(router.tick(now: 71.2), to: "p") == [.stopRendition(streamId: 1, codec: .h264)])
        // A stream published in H.264, or one that offers no rendition, has nothing to ask.
        var plain = session(offers: [], subscribers: [])
        #expect(plain.hlsReadsRendition(of: 1, codec: .h264, true, now: 1).isEmpty && plain.tick(now: 10).isEmpty)
    }

    @Test func decodesMatchesCodecStringsByTheirBeginning() {
        #expect(RenditionBook.decodes(["av01.0"], "av01.0.08M.08"))
        #expect(!RenditionBook.decodes(["av01.0"], "av01.1.08M.08.0.000.06.06.06.0"))
        #expect(RenditionBook.decodes(["avc1.42"], "avc1.42C01F"))
        #expect(RenditionBook.decodes(["avc1.42C01F"], RenditionBook.expectedCodecString(.h264)))
        #expect(RenditionBook.decodes(["AVC1.42"], "avc1.42C01F"))
        #expect(!RenditionBook.decodes([""], "vp8"))
        #expect(!RenditionBook.decodes([], "vp8"))
    }
}
