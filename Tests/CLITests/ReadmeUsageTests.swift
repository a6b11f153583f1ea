import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// The README's "Usage" and "Privacy masks" commands on a 1600×900 Xvfb with a Firefox-like window: what each
/// records (size, codec, colours, frame rate, metadata) and what screensub reads back.
@Suite(.watchdog()) struct ReadmeUsageTests {
    static let orange = (r: UInt8(255), g: UInt8(128), b: UInt8(0))
    static let firefoxFrame = PixelRect(x: 100, y: 100, width: 400, height: 300)

    /// Runs a recording command until it has written for `seconds`, then stops it as Ctrl-C would; its outcome.
    static func record(_ shell: ReadmeShell, _ command: String, file: String, seconds: Double = 1.5) async throws -> ChildProcess.Outcome {
        let process = try shell.start(command)
        _ = try await eventually(20) { FileManager.default.fileExists(atPath: shell.path(file)) || process.hasExited }
        try await Task.sleep(for: .seconds(seconds))
        process.signal(SIGINT)
        return await process.wait(timeout: 30)
    }

    /// The size of the pictures a recording holds, and whether its middle shows `color`.
    static func looks(_ path: String, _ color: (r: UInt8, g: UInt8, b: UInt8)) throws -> [String] {
        try Pictures.measured(path) { "\($0.width)x\($0.height) \(TestPattern.difference($0, x: $0.width / 2, y: $0.height / 2, color) <= 24)" }
    }

    @Test func usage() async throws {
        let display = try await VirtualDisplay(width: 1600, height: 900)
        let painter = try XPainter(displayName: display.name)
        let firefox = painter.createApplicationWindow(
            Self.firefoxFrame, color: XPainter.pixel(red: 255, green: 128, blue: 0), instance: "Navigator", class: "firefox", title: "Mozilla Firefox")
        let shell = try ReadmeShell(.usage, display: display)

        var outcome = try await Self.record(shell, "screenpub --output share.webm", file: "share.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try await Pictures.probe(shell.path("share.webm"), "v", "codec_name,width,height") == "av1,1600,900")
        #expect(try await Pictures.probe(shell.path("share.webm"), "s", "codec_name") == "webvtt")

        outcome = try await shell.run("screensub --input share.webm --print-metadata")
        #expect(outcome.status == 0 && outcome.standardOutput.contains("key") && outcome.standardOutput.contains("Z"), "\(outcome.standardOutput) \(outcome.standardError)")
        outcome = try await shell.run("screensub --input share.webm --print-metadata --json")
        let objects = outcome.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!objects.isEmpty && objects.contains { $0["metadata"] != nil }, "\(outcome.standardOutput) \(outcome.standardError)")
        outcome = try await shell.run("screensub --input share.webm --frames pictures/")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try await Pictures.probe(shell.path("pictures/frame-000001.png"), "v", "width,height") == "1600,900")

        // Two frames a second while the window moves.
        try FileManager.default.removeItem(atPath: shell.path("share.webm"))
        let twoPerSecond = try shell.start("screenpub --output share.webm --duration 60 --fps 2")
        _ = try await eventually(20) { FileManager.default.fileExists(atPath: shell.path("share.webm")) }
        for step in 0..<30 {
            painter.move(window: firefox, x: 100 + step % 2 * 20, y: 100)
            try await Task.sleep(for: .milliseconds(100))
        }
        twoPerSecond.signal(SIGINT)
        outcome = await twoPerSecond.wait(timeout: 30)
        painter.move(window: firefox, x: Self.firefoxFrame.x, y: Self.firefoxFrame.y)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let times = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", shell.path("share.webm")])
        let stamps = times.standardOutput.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        #expect(stamps.count >= 4 && zip(stamps.dropFirst(), stamps).allSatisfy { $0 - $1 > 0.4 }, "2 fps: \(stamps)")

        outcome = try await shell.run("screenpub --list-windows")
        let id = "0x" + String(firefox, radix: 16)
        #expect(outcome.status == 0 && outcome.standardOutput.contains("Mozilla Firefox") && outcome.standardOutput.contains(id), "\(outcome.standardOutput)")

        outcome = try await Self.record(shell, "screenpub --output win.webm --window '*firefox*'", file: "win.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Self.looks(shell.path("win.webm"), Self.orange).allSatisfy { $0 == "400x300 true" })
        try FileManager.default.removeItem(atPath: shell.path("win.webm"))
        shell.substitutions = [("0x3a00007", id)]
        outcome = try await Self.record(shell, "screenpub --output win.webm --window 0x3a00007", file: "win.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Self.looks(shell.path("win.webm"), Self.orange).allSatisfy { $0 == "400x300 true" })

        outcome = try await shell.run("screenpub --list-monitors")
        #expect(outcome.status == 0 && outcome.standardOutput.contains("1600x900"), "\(outcome.standardOutput) \(outcome.standardError)")
        // Xvfb's one monitor is called "screen", not HDMI-1: the name it lists.
        let listed = try await ChildProcess.run(RunningShare.screenpub, ["--list-monitors", "--json"], environment: shell.environment)
        let monitors = (try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8))) as? [[String: Any]] ?? []
        let name = try #require(monitors.first?["name"] as? String, "\(listed.standardOutput)")
        shell.substitutions = [("HDMI-1", name)]
        outcome = try await Self.record(shell, "screenpub --output mon.webm --monitor HDMI-1", file: "mon.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Pictures.measured(shell.path("mon.webm")) { "\($0.width)x\($0.height)" }.allSatisfy { $0 == "1600x900" })

        outcome = try await Self.record(shell, "screenpub --output part.webm --region 0,0,1280,720", file: "part.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Pictures.measured(shell.path("part.webm")) { "\($0.width)x\($0.height)" }.allSatisfy { $0 == "1280x720" })

        for (command, codec) in [("screenpub --output s.webm --codec vp9", "vp9"), ("screenpub --output s.webm --codec vp8 --bitrate 800", "vp8")] {
            try? FileManager.default.removeItem(atPath: shell.path("s.webm"))
            outcome = try await Self.record(shell, command, file: "s.webm")
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(try await Pictures.probe(shell.path("s.webm"), "v", "codec_name") == codec)
        }
        // H.264 in Matroska, with the same metadata track; screensub reads and decodes it.
        outcome = try await Self.record(shell, "screenpub --codec h264 --output share.mkv", file: "share.mkv")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try await Pictures.probe(shell.path("share.mkv"), "v", "codec_name,profile,width,height") == "h264,Constrained Baseline,1600,900")
        #expect(try await Pictures.probe(shell.path("share.mkv"), "s", "codec_name") == "webvtt")
        outcome = try await shell.run("screensub --input share.mkv --print-metadata")
        #expect(outcome.status == 0 && outcome.standardOutput.contains("h264 1600×900") && outcome.standardOutput.contains("key"), "\(outcome.standardOutput) \(outcome.standardError)")
        let pictures = try Pictures.measured(shell.path("share.mkv")) { "\($0.width)x\($0.height) \(TestPattern.difference($0, x: 300, y: 250, Self.orange) <= 24)" }
        #expect(!pictures.isEmpty && pictures.allSatisfy { $0 == "1600x900 true" }, "\(pictures)")

        try? FileManager.default.removeItem(atPath: shell.path("s.webm"))
        outcome = try await Self.record(shell, "screenpub --output s.webm --chroma 444", file: "s.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try await Pictures.probe(shell.path("s.webm"), "v", "codec_name,profile,pix_fmt") == "av1,High,yuv444p")
        try? FileManager.default.removeItem(atPath: shell.path("s.webm"))
        outcome = try await Self.record(shell, "screenpub --output s.webm --metadata \"room 42\"", file: "s.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let cues = try await ChildProcess.run(RunningShare.screensub, ["--input", shell.path("s.webm"), "--print-metadata", "--json"])
        #expect(cues.standardOutput.contains("\"room 42\""), "\(cues.standardOutput)")

        try? FileManager.default.removeItem(atPath: shell.path("s.webm"))
        shell.substitutions = [(":1", display.name)]
        shell.environment["DISPLAY"] = ":0.none"  // the display comes from --display alone
        outcome = try await Self.record(shell, "screenpub --display :1 --no-cursor --output s.webm", file: "s.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Pictures.measured(shell.path("s.webm")) { picture in
            "\(picture.width)x\(picture.height) \(TestPattern.difference(picture, x: 300, y: 250, Self.orange) <= 24)"
        }.allSatisfy { $0 == "1600x900 true" })
        shell.expectAllRun()
    }
}
