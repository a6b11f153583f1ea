import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// `screenpub --publish whip+http://…` into a real SFU: Janus's VideoRoom behind a WHIP front, in a network
/// namespace joined by a veth pair (``JanusSFU``); a viewer through Janus decodes what it forwards.
@Suite(.watchdog()) struct WHIPTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"
    static let red = (r: 255, g: 0, b: 0)
    static let green = (r: 0, g: 200, b: 0)

    /// An SFU, or the test is skipped, saying why, where one cannot run (no root, no network namespaces).
    func sfu(codec: String = "vp9") async throws -> JanusSFU {
        do {
            return try await JanusSFU(codec: codec)
        } catch let failure as JanusSFU.Failure where failure.cannotStart {
            try Test.cancel("an SFU cannot run here: \(failure.description)")
        }
    }

    /// Runs `body` with an SFU, and removes it (processes, namespace) afterwards, also when `body` throws.
    func withSFU(codec: String = "vp9", _ body: (JanusSFU) async throws -> Void) async throws {
        try await sfu(codec: codec).use(body)
    }

    func publish(_ sfu: JanusSFU, display: VirtualDisplay, _ extra: [String] = [], token: String? = nil, url: String? = nil) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["DISPLAY"] = nil
        return try ChildProcess(
            screenpub,
            ["--display", display.name, "--publish", url ?? sfu.whipURL, "--whip-token", token ?? sfu.token, "--no-cursor", "--control-socket", ""]
                + extra,
            environment: environment)
    }

    static func close(_ picture: JanusSFU.Picture, _ color: (r: Int, g: Int, b: Int)) -> Bool {
        abs(picture.r - color.r) < 40 && abs(picture.g - color.g) < 40 && abs(picture.b - color.b) < 40
    }

    @Test func aViewerThroughJanusSeesTheSharedScreen() async throws {
        try await withSFU { sfu in try await viewerSeesTheScreen(sfu) }
    }

    func viewerSeesTheScreen(_ sfu: JanusSFU) async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let cover = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 255, green: 0, blue: 0))
        // One capture and one encode for two destinations: the SFU and a file.
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("whip-\(UUID().uuidString).webm").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("whip-\(UUID().uuidString).sock").path
        let share = try publish(sfu, display: display, ["--fps", "10", "--output", recording, "--control-socket", socket])
        defer { share.endInBackground(signal: SIGKILL) }
        #expect(try await eventually(30) { share.errorsSoFar.contains("over WHIP (vp9)") }, "\(share.errorsSoFar)\n\(sfu.log.suffix(2000))")
        // Janus asks for a keyframe when a viewer joins (here: when the WHIP front asks it to); the idle screen
        // sends nothing else, so a picture at the viewer proves that the request reached the encoder.
        let idle = try await sfu.watch(port: 5008, seconds: 3)
        #expect(!idle.isEmpty && idle.allSatisfy { Self.close($0, Self.red) }, "\(idle.count) pictures of the idle red screen")
        // The screen changes while the viewer watches: red, then green.
        let painting = Task {
            for step in 0..<12 {
                try await Task.sleep(for: .milliseconds(400))
                painter.fill(window: cover, PixelRect(x: 0, y: 0, width: 320, height: 240),
                    color: step < 6 ? XPainter.pixel(red: 255, green: 0, blue: 0) : XPainter.pixel(red: 0, green: 200, blue: 0))
                painter.fill(window: cover, PixelRect(x: step * 10, y: 0, width: 8, height: 8), color: XPainter.pixel(red: 0, green: 0, blue: 0))
                painter.sync()
            }
        }
        let pictures = try await sfu.watch(port: 5004, seconds: 6)
        try await painting.value
        #expect(pictures.count >= 5, "pictures through Janus: \(pictures.count)\n\(share.errorsSoFar)")
        #expect(pictures.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(pictures.contains { Self.close($0, Self.red) } && pictures.contains { Self.close($0, Self.green) }, "\(pictures.map { ($0.r, $0.g, $0.b) })")

        // The SFU's receiver reports (through webrtcbin's statistics) drive the encoder's target.
        let status = try await ChildProcess.run(screenpub, ["status", "--json", "--control-socket", socket], timeout: 30)
        let whip = ((try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])?["destinations"] as? [[String: Any]])?
            .first { $0["kind"] as? String == "whip" }
        #expect(whip?["targetKbps"] as? Int != nil && whip?["rateReason"] as? String != nil, "\(status.standardOutput)")

        // Stopping ends the WHIP session (DELETE of its resource) and exits 0.
        share.signal(SIGTERM)
        let outcome = await share.wait(timeout: 20)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try await eventually(30) { sfu.frontLog.contains("DELETE of resource") }, "\(sfu.frontLog)")
        let reader = try WebMReader(path: recording)
        let recorded = try reader.readAll()
        #expect(recorded.count >= 5 && reader.codec == .vp9, "the file beside the SFU has \(recorded.count) frames")
    }

    @Test func janusGoingAwayMidShareIsReconnectedTo() async throws {
        try await withSFU { sfu in try await reconnects(sfu) }
    }

    func reconnects(_ sfu: JanusSFU) async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let cover = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 0, green: 200, blue: 0))
        let share = try publish(sfu, display: display, ["--fps", "10", "--keepalive", "0.5"])
        defer { share.endInBackground(signal: SIGKILL) }
        #expect(try await eventually(30) { share.errorsSoFar.contains("over WHIP (vp9)") }, "\(share.errorsSoFar)")
        await sfu.stopJanus()
        #expect(try await eventually(40) { share.errorsSoFar.contains("reconnecting in") }, "\(share.errorsSoFar)")
        try await sfu.startJanus()
        #expect(
            try await eventually(60) { share.errorsSoFar.components(separatedBy: "over WHIP (vp9)").count >= 3 },
            "published again after Janus came back: \(share.errorsSoFar)")
        painter.fill(window: cover, PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 0, green: 200, blue: 0))
        let pictures = try await sfu.watch(port: 5006, seconds: 4)
        #expect(pictures.contains { Self.close($0, Self.green) }, "\(pictures.count) pictures after the reconnection")
    }

    @Test func aWrongTokenIsAClearError() async throws {
        try await withSFU { sfu in
            let display = try await VirtualDisplay(width: 320, height: 240)
            // Through a redirect (307), to the endpoint that refuses the token.
            let moved = sfu.whipURL.replacingOccurrences(of: ":8080/whip/", with: ":8080/redirect/whip/")
            let refused = try publish(sfu, display: display, ["--duration", "20"], token: "not-the-token", url: moved)
            let outcome = await refused.wait(timeout: 30)
            #expect(outcome.status == 1, "\(outcome.standardError)")
            #expect(
                outcome.standardError.contains("at \(sfu.whipURL.dropFirst("whip+".count)) refused the token (HTTP 401)")
                    && outcome.standardError.contains("--whip-token"),
                "\(outcome.standardError)")
            // AV1 cannot go over WHIP here: said before anything starts.
            let av1 = try await ChildProcess.run(screenpub, ["--display", display.name, "--publish", sfu.whipURL, "--codec", "av1"])
            #expect(av1.status == 64 && av1.standardError.contains("WHIP carries VP8, VP9 or H.264"), "\(av1.standardError)")
        }
    }

    /// A room that takes H.264 only (as an SFU for Safari viewers may be set up): `--codec h264` goes through.
    @Test func anH264ShareGoesThroughARoomThatTakesH264() async throws {
        try await withSFU(codec: "h264") { sfu in
            let display = try await VirtualDisplay(width: 320, height: 240)
            let painter = try XPainter(displayName: display.name)
            _ = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 0, green: 200, blue: 0))
            let share = try publish(sfu, display: display, ["--fps", "10", "--codec", "h264", "--keepalive", "0.5"])
            defer { share.endInBackground(signal: SIGKILL) }
            #expect(try await eventually(60) { share.errorsSoFar.contains("over WHIP (h264)") }, "\(share.errorsSoFar)\n\(sfu.log.suffix(2000))")
            let viewer = try await sfu.startWatching(port: 5010, codec: "h264", seconds: 4).wait(timeout: 60)
            let pictures = JanusSFU.pictures(in: viewer.standardOutput)
            #expect(
                !pictures.isEmpty && pictures.allSatisfy { Self.close($0, Self.green) && $0.width == 320 },
                "\(pictures.map { ($0.r, $0.g, $0.b) })\n\(viewer.standardOutput.suffix(1500))\n\(viewer.standardError.suffix(1500))\n\(share.errorsSoFar.suffix(1500))")
        }
    }

    @Test func anSFUThatDoesNotTakeVP9IsAClearError() async throws {
        try await withSFU(codec: "h264") { sfu in
            let display = try await VirtualDisplay(width: 320, height: 240)
            let wrongCodec = try publish(sfu, display: display, ["--duration", "20"])
            let answered = await wrongCodec.wait(timeout: 40)
            #expect(answered.status == 1, "\(answered.standardError)")
            #expect(answered.standardError.contains("answered without VP9 video"), "\(answered.standardError)")
        }
    }
}
