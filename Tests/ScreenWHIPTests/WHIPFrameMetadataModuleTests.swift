import Foundation
import ScreenMedia
import Testing

@testable import ScreenWHIP

/// The WHIP viewer's frame-metadata.js (packaging/whip-viewer) under node's test runner, reading messages that
/// ``WHIPFrameMessage`` wrote: both ends of the data channel's format agree.
struct WHIPFrameMetadataModuleTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theViewersPairingModulePassesItsTestsOnMessagesScreenpubWrote() async throws {
        guard let node = ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Issue.record("node is not installed (apt-get install nodejs): frame-metadata.js cannot be tested")
            return
        }
        var cases: [[String: Any]] = []
        for (index, text) in ["frame 12", "ünïcode · 32 bytes at most..", ""].enumerated() {
            var message = WHIPFrameMessage(
                wallClock: WallClockTime(secondsSince1970: 1_764_000_000 + Int64(index), nanoseconds: 250_000_000), isKeyframe: index == 0,
                metadata: try FrameMetadata(text: text))
            message.rtpTimestamp = UInt32.max - UInt32(index)
            cases.append([
                "base64": Data(message.encoded()).base64EncodedString(), "rtpTimestamp": Int(message.rtpTimestamp), "keyframe": index == 0,
                "captureMicros": Int(message.captureMicroseconds), "metadata": text,
            ])
        }
        let fixture = FileManager.default.temporaryDirectory.appendingPathComponent("frame-messages-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: cases).write(to: fixture)
        defer { try? FileManager.default.removeItem(at: fixture) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = ["--test", Self.repository.appendingPathComponent("Tests/Viewer/frame-metadata.test.mjs").path]
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENPUB_FRAME_MESSAGES"] = fixture.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("# pass 8") && text.contains("# skipped 0"), "\(text)")
    }
}
