import Foundation
import ScreenMedia
import ScreenSession
import Testing

/// What screensub prints of frames and HLS events, without running screensub.
struct SubscriberOutputTests {
    final class Lines: @unchecked Sendable {
        // @unchecked: the printer writes from the test's one thread only.
        var all: [String] = []
    }

    /// Hands `printer` a 4-byte VP9 keyframe (its payload lent for the call only, as encoders lend theirs).
    static func write(_ printer: LiveFramePrinter, metadata: String, wallClock: WallClockTime) throws {
        let payload: [UInt8] = [1, 2, 3, 4]
        let metadata = try FrameMetadata(text: metadata)
        try payload.withUnsafeBytes { bytes in
            try printer.write(EncodedFrame(
                codec: .vp9, payload: bytes, isKeyframe: true, width: 640, height: 360, captureTime: MediaTime(value: 3, timescale: 2),
                wallClock: wallClock, metadata: metadata))
        }
    }

    @Test func liveFramesPrintAsLinesOrJSONWithTheirMetadataAndAge() throws {
        let lines = Lines()
        let printer = LiveFramePrinter(json: true) { lines.all.append($0) }
        try Self.write(printer, metadata: "slide 3", wallClock: WallClockTime.now())
        // Drawn before subscribing: the relay's catch-up, whose age is not a latency.
        try Self.write(printer, metadata: "old", wallClock: WallClockTime(secondsSince1970: 1_000_000, nanoseconds: 0))
        let first = try #require(JSONSerialization.jsonObject(with: Data(lines.all[0].utf8)) as? [String: Any])
        #expect(first["metadata"] as? String == "slide 3" && first["keyframe"] as? Bool == true && first["bytes"] as? Int == 4)
        #expect(first["catchUp"] as? Bool == false && first["latencyMilliseconds"] != nil)
        let second = try #require(JSONSerialization.jsonObject(with: Data(lines.all[1].utf8)) as? [String: Any])
        #expect(second["catchUp"] as? Bool == true && second["latencyMilliseconds"] == nil)

        let text = Lines()
        try Self.write(LiveFramePrinter(json: false) { text.all.append($0) }, metadata: "slide 3", wallClock: WallClockTime.now())
        #expect(text.all.first?.contains("key") == true && text.all.first?.contains("640x360") == true)
        #expect(text.all.first?.contains("metadata=\"slide 3\"") == true)
    }

    @Test func hlsEventsPrintTheirDatesRangesAndMetadata() {
        let segment = HLSFollower.Event.segment(sequence: 4, programDateTime: "2026-11-24T10:00:00.000Z", duration: 2)
        #expect(segment.line(json: false) == "segment 4  2026-11-24T10:00:00.000Z  2.000 s")
        let range = HLSFollower.Event.dateRange(["ID": "pause-1", "CLASS": "screenpub.paused"])
        #expect(range.line(json: false) == "daterange pause-1  CLASS=screenpub.paused")
        let frame = HLSFollower.Event.frame(seconds: 1.5, metadata: [0xff], text: nil, captureTime: nil)
        #expect(frame.line(json: false).contains("metadata=0xff"))
        #expect(frame.line(json: true).contains("\"metadataBase64\":\"\\/w==\"") || frame.line(json: true).contains("\"metadataBase64\":\"/w==\""))
    }
}
