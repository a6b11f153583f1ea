import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// `--chroma 444` end to end, checked by pixels: 1-pixel red, green and blue lines on a dark background keep their
/// colour in a file, through the relay to screensub's PNGs, in an archive and in HLS played by ffmpeg, where 4:2:0
/// smears them.
@Suite(.watchdog()) struct ChromaShareTests {
    static let size = (width: 320, height: 240)
    /// Where the lines are measured: inside the painted area, away from its edges.
    static let measured = PixelRect(x: 16, y: 16, width: 288, height: 208)

    private func linesOnScreen() async throws -> (VirtualDisplay, XPainter) {
        let display = try await VirtualDisplay(width: Self.size.width, height: Self.size.height)
        let painter = try XPainter(displayName: display.name)
        painter.showColouredLines(PixelRect(x: 0, y: 0, width: Self.size.width, height: Self.size.height))
        return (display, painter)
    }

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("chroma-\(UUID().uuidString)-\(name)").path
    }

    @Test(arguments: [VideoCodec.av1, .vp9])
    func aFourFourFourRecordingKeepsColouredLinesThatFourTwoZeroSmears(codec: VideoCodec) async throws {
        let (display, painter) = try await linesOnScreen()
        _ = painter
        var errors: [String: Double] = [:]
        for chroma in ["444", "420"] {
            let path = temporaryPath("\(chroma).webm")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let recorded = try await ChildProcess.run(
                RunningShare.screenpub,
                ["--display", display.name, "--output", path, "--duration", "1.5", "--codec", codec.rawValue, "--chroma", chroma, "--no-cursor",
                 "--control-socket", ""])
            #expect(recorded.status == 0, "\(recorded.standardError)")
            let format = try await FFmpegPicture.format(of: path)
            #expect(format.pixelFormat == (chroma == "444" ? "yuv444p" : "yuv420p"), "\(codec) --chroma \(chroma): \(format)")
            if chroma == "444" { #expect(format.profile == (codec == .av1 ? "High" : "Profile 1"), "\(format)") }
            let picture = try await FFmpegPicture.last(of: path, width: Self.size.width, height: Self.size.height)
            errors[chroma] = TestPattern.colouredLineError(picture, in: Self.measured)
        }
        #expect((errors["444"] ?? .infinity) < 20, "\(codec): \(errors)")
        #expect((errors["420"] ?? 0) > 40, "\(codec): \(errors)")
    }

    @Test func vp8AndWHIPSayWhyTheyTakeNoFourFourFour() async throws {
        let vp8 = try await ChildProcess.run(RunningShare.screenpub, ["--codec", "vp8", "--chroma", "444", "--output", temporaryPath("x.webm")])
        #expect(vp8.status == 64 && vp8.standardError.contains("VP8 has no 4:4:4"), "\(vp8.standardError)")
        let whip = try await ChildProcess.run(
            RunningShare.screenpub, ["--codec", "vp9", "--chroma", "444", "--to", "whip+http://127.0.0.1:1/whip"])
        #expect(whip.status == 64 && whip.standardError.contains("--chroma 420"), "\(whip.standardError)")
    }

    /// Through a relay: screensub's PNGs, an archive and HLS (played by ffmpeg) all keep the lines' colour.
    @Test func theRelaysSubscribersArchivesAndHLSCarryFourFourFour() async throws {
        let (display, painter) = try await linesOnScreen()
        _ = painter
        let relay = try await RunningRelayProcess()
        let server = "http://127.0.0.1:\(relay.port)"
        let share = try await relay.share(display, ["--chroma", "444", "--no-cursor"])
        defer { share.process.endInBackground(signal: SIGKILL) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = RunningRelayProcess.secret
        environment["XDG_CONFIG_HOME"] = relay.home + "/admin-config"
        func admin(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            try await ChildProcess.run(RunningRelayProcess.screenrelay, arguments + ["--server", server], environment: environment, timeout: 30)
        }
        let minted = try await admin(["token", share.session, "--json"])
        let token = try #require((try JSONSerialization.jsonObject(with: Data(minted.standardOutput.utf8)) as? [String: Any])?["token"] as? String)

        // screensub decodes in full colour resolution: its PNGs keep the lines.
        let pictures = temporaryPath("pictures")
        defer { try? FileManager.default.removeItem(atPath: pictures) }
        let subscribed = try await ChildProcess.run(
            RunningShare.screensub, ["--server", server, "--token", token, "--frames", pictures, "--count", "2"], timeout: 60)
        #expect(subscribed.status == 0, "\(subscribed.standardError)")
        let png = try #require(try FileManager.default.contentsOfDirectory(atPath: pictures).sorted().last)
        let fromPNG = try await FFmpegPicture.last(of: pictures + "/" + png, width: Self.size.width, height: Self.size.height)
        #expect(TestPattern.colouredLineError(fromPNG, in: Self.measured) < 20)

        // An archive: a WebM in 4:4:4 with the lines in colour.
        let started = try await admin(["archive", "start", share.session, "--json"])
        let archive = try #require((try JSONSerialization.jsonObject(with: Data(started.standardOutput.utf8)) as? [String: Any])?["id"] as? String, "\(started.standardError)")
        try await Task.sleep(for: .seconds(2))
        #expect(try await admin(["archive", "stop", archive]).status == 0)
        let file = temporaryPath("archive.webm")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let downloaded = try await admin(["archive", "download", archive, "--output", file])
        #expect(downloaded.status == 0, "\(downloaded.standardError)")
        #expect(try await FFmpegPicture.format(of: file).pixelFormat == "yuv444p")
        let fromArchive = try await FFmpegPicture.last(of: file, width: Self.size.width, height: Self.size.height)
        #expect(TestPattern.colouredLineError(fromArchive, in: Self.measured) < 20)

        // HLS: the playlist names AV1 High profile (after the H.264 variant, 4:2:0, which players that read no
        // CODECS start on); ffmpeg plays the AV1 variant's segments in full colour.
        let playlist = "\(server)/hls/\(share.session)/index.m3u8?token=\(token)"
        let variants = try await ChildProcess.run("/usr/bin/curl", ["-sf", playlist])
        #expect(variants.standardOutput.contains("CODECS=\"av01.1.") && variants.standardOutput.contains("\nstream.m3u8?token="), "\(variants.standardOutput)")
        let stream = playlist.replacingOccurrences(of: "/index.m3u8?", with: "/stream.m3u8?")
        let fromHLS = try await FFmpegPicture.last(of: stream, width: Self.size.width, height: Self.size.height, frames: 3)
        #expect(TestPattern.colouredLineError(fromHLS, in: Self.measured) < 20)
    }
}
