import Foundation
import ScreenMedia
import ScreenTesting
import ScreenWire
import Testing

/// The browser viewer's pure modules, tested without a page by node's test runner (Tests/Viewer): wire.js with
/// messages that screenpub's own Swift side wrote (the two ends of the protocol agree), and the session reducer.
struct ViewerWireTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Messages as a publisher sends them, with what the viewer must read from each.
    static func fixture() throws -> Data {
        var cases: [[String: Any]] = []
        let metadata = try FrameMetadata(text: "frame 12 · ünïcode")
        let video = MediaFrameHeader(
            streamID: 4, sequence: 12, flags: [.keyframe], codec: .av1, width: 1920, height: 1080,
            captureTime: MediaTime(value: 2_500_000_000, timescale: 1_000_000_000), wallClockMilliseconds: 1_764_000_000_123,
            metadata: metadata, payloadLength: 5)
        cases.append([
            "base64": Data(video.encoded() + [1, 2, 3, 4, 5]).base64EncodedString(), "kind": "video", "streamId": 4, "sequence": 12,
            "wallClockMs": 1_764_000_000_123, "payloadLength": 5, "keyframe": true, "width": 1920, "height": 1080, "codec": 3,
            "metadata": "frame 12 · ünïcode",
        ])
        let audio = AudioFrameHeader(
            streamID: 4, sequence: 99, codec: .opus, channels: 2, samples: 960, captureTime: MediaTime(value: 48_000, timescale: 48_000),
            wallClockMilliseconds: 1_764_000_000_456, isSilence: false, payloadLength: 3)
        cases.append([
            "base64": Data(audio.encoded() + [7, 8, 9]).base64EncodedString(), "kind": "audio", "streamId": 4, "sequence": 99,
            "wallClockMs": 1_764_000_000_456, "payloadLength": 3, "channels": 2, "samples": 960, "captureUs": 1_000_000,
        ])
        return try JSONSerialization.data(withJSONObject: cases)
    }

    @Test func theViewersModulesPassTheirTestsOnMessagesScreenpubWrote() async throws {
        guard let node = ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Issue.record("node is not installed (apt-get install nodejs): the viewer's wire.js cannot be tested")
            return
        }
        let fixture = FileManager.default.temporaryDirectory.appendingPathComponent("wire-\(UUID().uuidString).json")
        try Self.fixture().write(to: fixture)
        defer { try? FileManager.default.removeItem(at: fixture) }
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENPUB_WIRE_FIXTURE"] = fixture.path
        let tests = ["wire.test.mjs", "session.test.mjs", "parts.test.mjs", "hls.test.mjs"].map { Self.repository.appendingPathComponent("Tests/Viewer/\($0)").path }
        let outcome = try await ChildProcess.run(node, ["--test"] + tests, environment: environment)
        #expect(outcome.status == 0, "\(outcome.standardOutput)\(outcome.standardError)")
        // Every case ran (the fixture's included: none skipped).
        #expect(outcome.standardOutput.contains("# pass 31") && outcome.standardOutput.contains("# skipped 0"), "\(outcome.standardOutput)")
    }
}
