import Foundation
import ScreenMedia
import ScreenTesting
import ScreenWire
import Testing

@Suite struct ControlMessageTests {
    static let properties = StreamProperties(
        codec: .vp9, width: 1920, height: 1080, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1.5)
    static let stream = StreamInfo(streamId: 3, connectionId: "c1", name: "screen", properties: properties)

    static let all: [ControlMessage] = [
        .hello(token: "eyJ.abc.def", client: "screenpub/0.1.0"),
        .publish(name: "screen", properties: properties), .publish(name: "screen", properties: properties, acks: true),
        .publish(name: "screen", properties: properties, acks: true, discardableLayers: true),
        .publish(name: "screen", properties: properties, refreshes: true), .requestRefresh(streamId: 3),
        .subscribe(streamId: 3, audio: true, layers: true), .ack(streamId: 3, sequence: 1 << 40, receivedAt: 12_345.678),
        .subscriptionChanged(streamId: 3, highestLayer: 1, layers: 3, waitingForKeyframe: false),
        .uplink(streamId: 3, targetKbps: 900, estimatedKbps: 1000), .uplink(streamId: 3, targetKbps: 1500, estimatedKbps: nil),
        .welcome(connectionId: "c2", sessionId: "s1", role: .publisher, streams: [], connections: [], protocolVersion: 2),
        .unpublish(streamId: 3), .subscribe(streamId: 3), .subscribe(streamId: 3, audio: true), .unsubscribe(streamId: 3), .requestKeyframe(streamId: 3),
        .welcome(
            connectionId: "c2", sessionId: "s1", role: .subscriber, streams: [stream],
            connections: [ConnectionInfo(connectionId: "c1", role: .publisher, data: "name=Ada")]),
        .published(stream), .subscribed(streamId: 3), .streamCreated(stream),
        .streamDestroyed(streamId: 3, reason: "unpublished"),
        .connectionCreated(ConnectionInfo(connectionId: "c3", role: .moderator, data: "")),
        .connectionDestroyed(connectionId: "c3"),
        .error(code: .forbidden, message: "a subscriber token cannot publish"),
        .streamPropertyChanged(
            streamId: 3,
            properties: StreamProperties(
                codec: .vp9, width: 1920, height: 1080, estimatedFramesPerSecond: 10, estimatedCaptureDelayMilliseconds: 1.5,
                hasVideo: false)),
        .publish(name: "screen", properties: properties, renditions: [.h264]),
        .subscribe(streamId: 3, layers: true, catchUp: true, decodes: ["av01.0.08M.08", "avc1.42"]),
        .publishRendition(streamId: 3, properties: StreamProperties(
            codec: .h264, width: 1920, height: 1080, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1.5, codecString: "avc1.42C028")),
        .published(StreamInfo(streamId: 4, connectionId: "c1", name: "screen", properties: properties, renditionOf: 3)),
        .renditionChanged(streamId: 3, rendition: StreamInfo(streamId: 4, connectionId: "c1", name: "screen", properties: properties, renditionOf: 3)),
        .renditionChanged(streamId: 3, rendition: nil),
        .startRendition(streamId: 3, codec: .h264), .stopRendition(streamId: 3, codec: .h264),
    ]

    /// `decodes` is bounded: a subscriber cannot make the relay hold or match an unbounded list.
    @Test func decodesIsBoundedInCountLengthAndCharacters() throws {
        func subscribe(_ decodes: [String]) -> String {
            let list = decodes.map { "\"\($0)\"" }.joined(separator: ",")
            return #"{"v":1,"type":"subscribe","streamId":3,"decodes":["# + list + "]}"
        }
        #expect(try ControlMessage.parse(subscribe(["avc1.42"])) == .subscribe(streamId: 3, decodes: ["avc1.42"]))
        for hostile in [
            Array(repeating: "vp8", count: ControlMessage.maximumDecodes + 1), [String(repeating: "a", count: ControlMessage.maximumCodecStringBytes + 1)],
            ["av01 0"], ["avc1\\u0000"],
        ] {
            #expect(throws: WireError.self) { try ControlMessage.parse(subscribe(hostile)) }
        }
        let offers = #"{"v":1,"type":"publish","properties":{"videoType":"screen","codec":"vp8","width":4,"height":2,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":0},"renditions":["h264","h264","h264","h264","h264"]}"#
        #expect(throws: WireError.self) { try ControlMessage.parse(offers) }
        let unknown = offers.replacingOccurrences(of: #"["h264","h264","h264","h264","h264"]"#, with: #"["hevc"]"#)
        #expect { try ControlMessage.parse(unknown) } throws: { ($0 as? WireError)?.message.contains(#"not "hevc""#) == true }
        #expect(throws: WireError.self) { try ControlMessage.parse(#"{"v":1,"type":"startRendition","streamId":3,"codec":"h265"}"#) }
    }

    @Test func hasVideoIsOnUnlessSaidOtherwise() throws {
        // A peer that does not know pausing sends no hasVideo: its stream has video.
        let text = #"{"v":1,"type":"publish","name":"s","properties":{"videoType":"screen","codec":"vp8","width":4,"height":2,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":0}}"#
        guard case .publish(_, let properties, let acks, let discardableLayers, _, let renditions) = try ControlMessage.parse(text) else {
            Issue.record("not a publish message")
            return
        }
        #expect(properties.hasVideo)
        #expect(!acks, "a peer from before protocol 3 asks for no acknowledgements")
        #expect(!discardableLayers, "nor says its layers are discardable (protocol 4)")
        #expect(renditions.isEmpty, "nor offers renditions (protocol 7)")
        #expect(ControlMessage.publish(name: "s", properties: Self.properties).encoded().contains(#""hasVideo":true"#))
    }

    @Test(arguments: all)
    func roundTrips(_ message: ControlMessage) throws {
        let text = message.encoded()
        #expect(text.hasPrefix("{"))
        #expect(text.contains("\"v\":1"))
        #expect(text.contains("\"type\":\"\(message.type)\""))
        #expect(try ControlMessage.parse(text) == message)
    }

    /// Protocol 3's additions are optional fields and new types: an older peer's messages parse as before, and
    /// a relay that leaves the protocol out of its welcome is taken to speak 2.
    @Test func protocolThreeStaysCompatible() throws {
        let oldWelcome = #"{"v":1,"type":"welcome","connectionId":"c","sessionId":"s","role":"publisher","streams":[],"connections":[]}"#
        guard case .welcome(_, _, _, _, _, let version) = try ControlMessage.parse(oldWelcome) else {
            Issue.record("not a welcome")
            return
        }
        #expect(version == 2)
        #expect(ControlMessage.welcome(connectionId: "c", sessionId: "s", role: .publisher, streams: [], connections: []).encoded()
            .contains(#""protocol":7"#))
        #expect(ControlMessage.subscribe(streamId: 1).encoded() == #"{"streamId":1,"type":"subscribe","v":1}"#)
        // Protocol 5: a subscriber that reads the catch-up flag says so; one that does not is never sent it.
        let catchUp = ControlMessage.subscribe(streamId: 1, layers: true, catchUp: true)
        #expect(catchUp.encoded() == #"{"catchUp":true,"layers":true,"streamId":1,"type":"subscribe","v":1}"#)
        #expect(try ControlMessage.parse(catchUp.encoded()) == catchUp)
        #expect(code(#"{"v":1,"type":"subscriptionChanged","streamId":1,"highestLayer":3,"layers":3,"waitingForKeyframe":false}"#) == .malformed)
    }

    @Test func publishCarriesTheScreenVideoType() {
        let text = ControlMessage.publish(name: "screen", properties: Self.properties).encoded()
        #expect(text.contains("\"videoType\":\"screen\""))
        #expect(text.contains("\"estimatedFramesPerSecond\":5"))
        #expect(text.contains("\"estimatedCaptureDelayMilliseconds\":1.5"))
    }

    private func code(_ text: String) -> WireErrorCode? {
        do {
            _ = try ControlMessage.parse(text)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test func badMessagesAreRejectedWithTheirCode() {
        #expect(code("") == .malformed)
        #expect(code("not json") == .malformed)
        #expect(code("[1,2]") == .malformed)
        #expect(code(#"{"type":"hello","token":"t"}"#) == .malformed)  // no version
        #expect(code(#"{"v":2,"type":"hello","token":"t"}"#) == .unsupportedVersion)
        #expect(code(#"{"v":1,"type":"dance"}"#) == .unknownMessage)
        #expect(code(#"{"v":1,"type":"hello"}"#) == .malformed)  // missing token
        #expect(code(#"{"v":1,"type":"subscribe","streamId":-1}"#) == .malformed)
        #expect(code(#"{"v":1,"type":"subscribe","streamId":"3"}"#) == .malformed)
        #expect(code(#"{"v":1,"type":"publish","properties":{"videoType":"hologram","codec":"vp9","width":1,"height":1,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":0}}"#) == .malformed)
        let huge = #"{"v":1,"type":"hello","token":""# + String(repeating: "a", count: 70_000) + #""}"#
        #expect(code(huge) == .tooLarge)
    }

    /// Stream properties are bounded where they are parsed, each refusal naming its field.
    @Test func streamPropertiesOutOfBoundsAreMalformedWithTheFieldNamed() {
        func refusal(_ fields: String, type: String = "publish") -> String? {
            let properties = #"{"videoType":"screen","codec":"vp9","# + fields + "}"
            let text = type == "publish"
                ? #"{"v":1,"type":"publish","properties":"# + properties + "}"
                : #"{"v":1,"type":"streamPropertyChanged","streamId":1,"properties":"# + properties + "}"
            do {
                _ = try ControlMessage.parse(text)
                return nil
            } catch {
                return error.kind == .malformed ? error.message : "\(error.kind)"
            }
        }
        let good = #""width":1920,"height":1080,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":2"#
        #expect(refusal(good) == nil)
        #expect(refusal(good, type: "streamPropertyChanged") == nil)
        let cases: [(String, String)] = [
            (#""width":1920,"height":1080,"estimatedFramesPerSecond":0,"estimatedCaptureDelayMilliseconds":2"#, "estimatedFramesPerSecond"),
            (#""width":1920,"height":1080,"estimatedFramesPerSecond":1e-300,"estimatedCaptureDelayMilliseconds":2"#, "estimatedFramesPerSecond"),
            (#""width":1920,"height":1080,"estimatedFramesPerSecond":-5,"estimatedCaptureDelayMilliseconds":2"#, "estimatedFramesPerSecond"),
            (#""width":1920,"height":1080,"estimatedFramesPerSecond":1e308,"estimatedCaptureDelayMilliseconds":2"#, "estimatedFramesPerSecond"),
            (#""width":-1,"height":1080,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":2"#, "width"),
            (#""width":1920,"height":99999,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":2"#, "height"),
            (#""width":1920,"height":1080,"estimatedFramesPerSecond":5,"estimatedCaptureDelayMilliseconds":-1"#, "estimatedCaptureDelayMilliseconds"),
            (good + #","codecString":"vp09\n00""#, "codecString"),
            (good + #","audio":{"codec":"opus","sampleRate":0,"channels":2,"estimatedCaptureDelayMilliseconds":0}"#, "audio.sampleRate"),
            (good + #","audio":{"codec":"opus","sampleRate":48000,"channels":9,"estimatedCaptureDelayMilliseconds":0}"#, "audio.channels"),
        ]
        for (fields, field) in cases {
            for type in ["publish", "streamPropertyChanged"] {
                let message = refusal(fields, type: type)
                #expect(message?.contains(field) == true, "\(type) with \(fields): \(message ?? "accepted")")
            }
        }
        #expect(code(#"{"v":1,"type":"uplink","streamId":1,"targetKbps":9223372036854775807}"#) == .malformed)
    }

    @Test func unknownExtraFieldsAreIgnored() throws {
        let message = try ControlMessage.parse(#"{"v":1,"type":"subscribe","streamId":4,"future":true}"#)
        #expect(message == .subscribe(streamId: 4))
    }

    /// Random pieces of JSON: each text is refused, or parses to a message that encodes and parses back to itself.
    @Test func randomTextParsesToAMessageThatRoundTripsOrIsRefused() {
        let pieces = ["{", "}", "\"v\":1", "\"type\":", "\"hello\"", ",", "\"token\":", "null", "[", "]", "1e999", "\"\\u0000\"", "-", "true"]
        var generator = SeededRandomNumberGenerator()
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0..<12, using: &generator)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &generator)] }.joined()
            guard let message = try? ControlMessage.parse(text) else { continue }
            #expect((try? ControlMessage.parse(message.encoded())) == message, "\(text) (\(generator))")
        }
    }
}

@Suite struct RelayEndpointTests {
    @Test func webSocketURLFollowsTheScheme() {
        #expect(RelayEndpoint.webSocketURL(server: "http://127.0.0.1:8090") == "ws://127.0.0.1:8090/ws")
        #expect(RelayEndpoint.webSocketURL(server: "https://relay.example/") == "wss://relay.example/ws")
    }

    @Test func remoteTextIsEscapedForLogsAndTerminals() {
        #expect("hello".escapingControlCharacters == "hello")
        #expect("a\nscreenpub: forged".escapingControlCharacters == "a\\nscreenpub: forged")
        #expect("\u{1B}[2J\t\\ é \u{202E}".escapingControlCharacters == "\\u{1b}[2J\\t\\\\ é \\u{202e}")
    }
}

/// A message the relay cannot read is refused with the field that is wrong and how, not "invalid fields".
@Suite struct ControlMessageRefusalTests {
    @Test(arguments: [
        (#"{"v":1,"type":"subscribe"}"#, #""streamId" is missing"#),
        (#"{"v":1,"type":"subscribe","streamId":-1}"#, "out of its field's range"),
        (#"{"v":1,"type":"subscribe","streamId":4294967296}"#, "out of its field's range"),
        (#"{"v":1,"type":"subscribe","streamId":"7"}"#, #""streamId" is not a whole number in range"#),
        (#"{"v":1,"type":"subscribe","streamId":7,"audio":"yes"}"#, #""audio" is not true or false"#),
        (#"{"v":1.5,"type":"hello","token":"t"}"#, #""v""#),
        (#"{"v":1e308,"type":"hello","token":"t"}"#, "out of its field's range"),
        (#"{"v":1,"type":"publish","properties":{"width":1e308}}"#, "publish message: "),
        (#"{"type":"hello","token":"t"}"#, #""v" is missing"#),
        (#"{"v":1,"type":"hello","token":"t""#, "it is not valid JSON"),
    ])
    func namesTheFieldAndWhatIsWrongWithIt(text: String, expected: String) {
        #expect(throws: WireError.self) { try ControlMessage.parse(text) }
        do {
            _ = try ControlMessage.parse(text)
        } catch {
            #expect(error.message.contains(expected), "\(text): \(error.message)")
        }
    }
}
