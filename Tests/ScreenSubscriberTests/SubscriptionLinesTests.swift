import Foundation
import ScreenMedia
@testable import ScreenSession
import ScreenSubscriber
import ScreenWire
import Testing

/// The lines `screensub --server` and `--chat` print, for people and as JSON.
struct SubscriptionLinesTests {
    static let stream = StreamInfo(
        streamId: 7, connectionId: "c1", name: "screen",
        properties: StreamProperties(
            codec: .av1, width: 1920, height: 1080, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 10,
            audio: AudioProperties(channels: 2), hasAudio: false))

    @Test func theStreamAndItsChanges() {
        #expect(SubscriptionLines.waiting(sessionId: "s1", json: false) == "session s1: waiting for a screen to be shared…")
        #expect(SubscriptionLines.waiting(sessionId: "s1", json: true) == #"{"event":"waiting","sessionId":"s1"}"#)
        #expect(
            SubscriptionLines.stream(Self.stream, sessionId: "s1", json: false)
                == "session s1: stream 7 \"screen\", screen 1920×1080 av1 ~5.0 fps, opus stereo (muted)")
        #expect(SubscriptionLines.stream(Self.stream, sessionId: "s1", json: true) == nil)
        #expect(SubscriptionLines.propertiesChanged(Self.stream, json: false) == "stream 7: video on, sound muted, ~5.0 fps")
        #expect(
            SubscriptionLines.propertiesChanged(Self.stream, json: true)
                == #"{"estimatedFramesPerSecond":5,"event":"streamPropertyChanged","hasAudio":false,"hasVideo":true,"streamId":7}"#)
        let thinned = Reception(highestLayer: 0, layers: 3, waitingForKeyframe: false)
        #expect(
            SubscriptionLines.receptionChanged(thinned, streamFramesPerSecond: 8, json: true)
                == #"{"event":"subscriptionChanged","highestLayer":0,"layers":3,"waitingForKeyframe":false}"#)
        #expect(SubscriptionLines.receptionChanged(thinned, streamFramesPerSecond: 8, json: false) == thinned.message(streamFramesPerSecond: 8))
    }

    @Test func theSummary() {
        var summary = SubscriptionSummary()
        (summary.framesReceived, summary.framesRendered, summary.catchUpFrames, summary.audioFramesReceived) = (12, 10, 2, 50)
        summary.ending = "the stream ended"
        #expect(
            SubscriptionLines.summary(summary, json: true)
                == #"{"kind":"summary","framesReceived":12,"framesRendered":10,"catchUpFrames":2,"staleFrames":0,"audioFramesReceived":50}"#)
        #expect(SubscriptionLines.summary(summary, json: false) == "12 frames received, 10 decoded, 50 audio frames, 2 catch-up; the stream ended")
        #expect(SubscriptionLines.connectionLost(summary).hasSuffix("what arrived was kept (12 frames)"))
    }

    @Test func chatLinesAreEscapedOrJSON() {
        let chat = Signal(type: "chat", data: "hi\u{1B}[2J", from: "c2", fromData: "name=Ada")
        let text = ChatSession.line(chat, json: false)
        #expect(text.hasPrefix("<Ada> hi") && !text.contains("\u{1B}"), "\(text)")
        let json = ChatSession.line(chat, json: true)
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["signalType"] as? String == "chat" && object?["data"] as? String == "hi\u{1B}[2J")
        #expect(object?["from"] as? String == "c2" && object?["fromData"] as? String == "name=Ada" && object?["to"] is NSNull)
        #expect(json.hasPrefix(#"{"data":"#), "keys sorted: \(json)")
        let other = Signal(type: "raise-hand", data: "", from: "c3")
        #expect(ChatSession.line(other, json: false).hasPrefix("[raise-hand from "))
    }
}
