import Foundation
import ScreenCodec
import ScreenMedia
import Logging
import ScreenRecording
import ScreenService
@testable import ScreenSubscriber
import ScreenTesting
import Testing

/// `screensub --input`'s read loop on a recording made here, and the ServiceGroup a live subscription runs in.
struct RecordingDumpTests {
    /// Three VP8 frames of a moving bar, each with text metadata.
    static func record() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dump-\(UUID().uuidString).webm").path
        let frame = VideoFrame(width: 160, height: 96)
        let encoder = makeVideoEncoder(.init(codec: .vp8, framesPerSecond: 5))
        var writer: WebMWriter?
        for index in 0..<3 {
            TestPattern.fill(frame) { x, _ in x / 20 == index ? (255, 255, 255) : (10, 10, 40) }
            frame.captureTime = MediaTime(value: Int64(index) * 200_000_000, timescale: 1_000_000_000)
            frame.metadata = try FrameMetadata(text: "frame \(index)")
            try encoder.encode(frame) { encoded in
                if writer == nil {
                    writer = try WebMWriter(path: path, codec: .vp8, width: 160, height: 96, framesPerSecond: 5)
                }
                try writer?.write(encoded)
            }
        }
        try writer?.finish()
        return path
    }

    static func lines(_ dump: RecordingDump) throws(CommandFailure) -> [String] {
        let lines = Locked<[String]>([])
        try dump.run(output: JobOutput(line: { line in lines.withLock { $0.append(line) } }, remark: { _ in }))
        return lines.value
    }

    @Test func everyFrameIsReadDecodedAndCounted() throws {
        let path = try Self.record()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = try Self.lines(RecordingDump(path: path, decodes: true, framesDirectory: nil, printsMetadata: true, json: false))
        #expect(text.first == "\(path): vp8 160×96, metadata track: yes")
        #expect(text.count == 5 && text[1].hasPrefix("frame     0") && text[1].contains("metadata=\"frame 0\""), "\(text)")
        #expect(text.last?.hasPrefix("3 frames, ") == true && text.last?.hasSuffix(", 3 decoded") == true, "\(text)")
        let json = try Self.lines(RecordingDump(path: path, decodes: false, framesDirectory: nil, printsMetadata: true, json: true))
        #expect(json.count == 3, "JSON has the frames only: \(json)")
        let first = try JSONSerialization.jsonObject(with: Data(json[0].utf8)) as? [String: Any]
        #expect(first?["metadata"] as? String == "frame 0" && first?["index"] as? Int == 0 && first?["width"] == nil)
    }

    @Test func anUnreadableFileFailsWithItsSentence() {
        do {
            _ = try Self.lines(RecordingDump(path: "/nonexistent/a.webm", decodes: true, framesDirectory: nil, printsMetadata: false, json: false))
            Issue.record("a missing file was read")
        } catch {
            #expect(error.kind == ExitStatus.runtimeFailure && error.message.contains("/nonexistent/a.webm"), "\(error)")
        }
    }

    @Test func theServiceGroupGivesBackWhatTheSubscriptionReturnedOrThrew() async throws {
        #expect(try await LiveSubscription.untilShutdownSignal(logger: .init(label: "test")) { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await LiveSubscription.untilShutdownSignal(logger: .init(label: "test")) { throw Refused() } }
    }
}
