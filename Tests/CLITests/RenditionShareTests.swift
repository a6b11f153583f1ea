import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// A rendition per viewer, end to end: screenpub shares in AV1, a subscriber that decodes only H.264 (what an
/// iPhone's browser does) gets the share's H.264 rendition with its metadata, the publisher encodes it only while
/// someone needs it, and starts it again for the next such viewer.
@Suite(.watchdog()) struct RenditionShareTests {
    /// The bound on a joiner's first picture here: the 2 s the rendition is built for, and room for a loaded machine.
    static let firstPictureSeconds = 5.0

    @Test func aViewerThatDecodesOnlyH264GetsTheRenditionWhileItWatches() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        painter.fill(PixelRect(x: 0, y: 0, width: 320, height: 240), color: 0x28A0DC)
        let relay = try await RunningRelayProcess()
        let server = "http://127.0.0.1:\(relay.port)"
        let share = try await relay.share(display, ["--codec", "av1", "--no-cursor", "--metadata", "frame-of-the-share"])
        defer { share.process.endInBackground(signal: SIGKILL) }
        let token = try await relay.subscriberToken(session: share.session)
        let pictures = FileManager.default.temporaryDirectory.appendingPathComponent("rendition-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pictures) }

        /// One viewer that decodes only H.264 until its first `count` pictures: how long it took, and its lines.
        func watchAsAnIPhone(count: Int) async throws -> (seconds: Double, lines: [[String: Any]]) {
            let started = Date()
            let watched = try await ChildProcess.run(
                RunningShare.screensub,
                ["--server", server, "--token", token, "--decodes-only", "avc1.42", "--count", "\(count)", "--print-metadata", "--json", "--frames", pictures],
                timeout: 60)
            #expect(watched.status == 0, "\(watched.standardError)")
            let lines = watched.standardOutput.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            return (Date().timeIntervalSince(started), lines)
        }

        let first = try await watchAsAnIPhone(count: 1)
        let summary = try #require(first.lines.last)
        #expect(summary["rendition"] as? String == "h264", "\(first.lines)")
        #expect(summary["framesRendered"] as? Int == 1, "\(first.lines)")
        let frames = first.lines.filter { $0["kind"] as? String != "summary" }
        #expect(frames.allSatisfy { $0["metadata"] as? String == "frame-of-the-share" }, "\(frames)")
        // The picture is the screen's: the H.264 rendition decoded to PNG.
        let png = try #require(try FileManager.default.contentsOfDirectory(atPath: pictures).sorted().last)
        let picture = try await FFmpegPicture.last(of: pictures + "/" + png, width: 320, height: 240)
        #expect(TestPattern.difference(picture, x: 160, y: 120, (40, 160, 220)) <= 12)
        // While the second encoder starts: its first picture within a few seconds of joining, screensub's own start
        // included, on a machine running the whole suite (Benchmarks/h264.sh measures it quiet: p95 0.35 s).
        #expect(first.seconds < Self.firstPictureSeconds, "the first picture took \(first.seconds) s")
        let log = { share.process.errorsSoFar }
        #expect(log().contains("publishing the h264 rendition"), "\(log())")

        // Nobody needs it any more: it stops after the relay's linger (10 s), and starts again for the next viewer.
        #expect(try await eventually(20) { log().contains("stopped the h264 rendition") }, "\(log())")
        let again = try await watchAsAnIPhone(count: 1)
        #expect(again.lines.last?["rendition"] as? String == "h264", "\(again.lines)")
        #expect(again.seconds < Self.firstPictureSeconds, "the restarted rendition's first picture took \(again.seconds) s")

        // A viewer that decodes the share as published gets it, and no rendition is made for it.
        let chromium = try await ChildProcess.run(
            RunningShare.screensub, ["--server", server, "--token", token, "--decodes-only", "av01,avc1.42", "--count", "1", "--json"], timeout: 60)
        #expect(chromium.status == 0 && !chromium.standardOutput.contains("rendition"), "\(chromium.standardOutput)")
    }
}
