import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// The screenpub and screensub executables, run as a user runs them, against a private Xvfb.
@Suite(.watchdog()) struct ScreenpubCommandTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"
    let screensub = ChildProcess.productsDirectory + "/screensub"

    private func temporaryPath(_ name: String) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("screenpub-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    /// The test's environment without a display.
    private var environmentWithoutDisplay: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        return environment
    }

    private func ffprobeVideoFrames(_ path: String) async throws -> (codec: String, frames: Int) {
        let result = try await ChildProcess.run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames", "-of", "csv=p=0", path])
        let fields = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        return (fields.first.map(String.init) ?? "", fields.count > 1 ? Int(fields[1]) ?? -1 : -1)
    }

    @Test func recordsAWebMWhoseMetadataScreensubPrintsBack() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let path = temporaryPath("share.webm")
        let result = try await ChildProcess.run(
            screenpub,
            ["--display", display.name, "--output", path, "--duration", "2", "--fps", "10", "--keepalive", "0.4", "--metadata", "hello screenpub"],
            environment: environmentWithoutDisplay)
        #expect(result.status == 0, "\(result.standardError)")
        let probe = try await ffprobeVideoFrames(path)
        #expect(probe.codec == "av1")  // what --codec auto picks for 640×360 at 10 fps
        #expect(probe.frames >= 4)  // the first frame and keepalives every 0.4 s for 2 s

        let listing = try await ChildProcess.run(screensub, ["--input", path, "--print-metadata", "--json"])
        #expect(listing.status == 0, "\(listing.standardError)")
        let lines = listing.standardOutput.split(separator: "\n")
        #expect(lines.count == probe.frames)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["metadata"] as? String == "hello screenpub")
            #expect((object?["captureTime"] as? String)?.hasSuffix("/1000000000") == true)
        }
    }

    @Test func theDefaultMetadataIsTheISO8601CaptureTime() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let path = temporaryPath("time.webm")
        let result = try await ChildProcess.run(
            screenpub, ["--display", display.name, "--output", path, "--duration", "1", "--codec", "vp8"])
        #expect(result.status == 0, "\(result.standardError)")
        await #expect(try ffprobeVideoFrames(path).codec == "vp8")
        let frames = try WebMReader(path: path).readAll()
        let first = try #require(frames.first?.cue)
        let text = try #require(first.metadata.text)
        #expect(text.count == 24)
        #expect(text.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(text == FrameMetadata.iso8601(first.wallClock).text)
    }

    @Test func sigtermFinishesTheFileAndExitsZero() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let path = temporaryPath("term.webm")
        let child = try ChildProcess(screenpub, ["--display", display.name, "--output", path, "--fps", "10"])
        // Change the screen a few times while it records (once it does: starting takes a while on a busy machine).
        #expect(try await eventually { child.errorsSoFar.contains("capturing ") }, "\(child.errorsSoFar)")
        for index in 0..<6 {
            try await Task.sleep(for: .milliseconds(250))
            painter.fill(PixelRect(x: index * 40, y: 0, width: 40, height: 40), color: 0xFFFFFF)
        }
        child.signal(SIGTERM)
        let result = await child.wait(timeout: 10)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("wrote \(path)"))
        let frames = try WebMReader(path: path).readAll()
        #expect(frames.count >= 4)
        // A finished file has its seek index (Cues), so ffprobe knows the duration without reading it all.
        let probe = try await ChildProcess.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        #expect((Double(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 1)
    }

    @Test func sigkillLeavesAFileReadableUpToTheLastFrame() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let path = temporaryPath("killed.webm")
        let child = try ChildProcess(screenpub, ["--display", display.name, "--output", path, "--fps", "10"])
        // Each paint once the file has the frame before it: however slow the machine, one frame per change.
        func framesWritten() -> Int { (try? WebMReader(path: path).readAll().count) ?? 0 }
        for index in 0..<5 {
            #expect(try await eventually(20) { framesWritten() >= index + 1 })
            painter.fill(PixelRect(x: index * 40, y: 100, width: 40, height: 40), color: 0xFF0000)
        }
        #expect(try await eventually(20) { framesWritten() >= 6 })
        child.signal(SIGKILL)
        #expect(await child.wait().status == 128 + SIGKILL)
        let frames = try WebMReader(path: path).readAll()
        // The first frame and one per change, and a refinement after any second the screen stood still (on
        // a slow machine, between two paints).
        #expect(frames.count >= 6 && frames.count <= 11, "\(frames.count) frames")
        #expect(frames.allSatisfy { $0.cue != nil })
        let listing = try await ChildProcess.run(screensub, ["--input", path])
        #expect(listing.status == 0)
        #expect(listing.standardOutput.contains("\(frames.count) frames, 1 keyframes, \(frames.count) decoded"), "\(listing.standardOutput)")
    }

    @Test func withoutADisplayItSaysSoAndExitsTwo() async throws {
        let result = try await ChildProcess.run(screenpub, ["--output", temporaryPath("x.webm")], environment: environmentWithoutDisplay)
        #expect(result.status == 2)
        #expect(result.standardError.contains("no X display"))
    }

    @Test func anEmbeddedRelayOnATakenPortIsAClearErrorAndExitsTwo() async throws {
        // A loopback port held, as another program would hold it.
        let taken = try RefusingLoopbackPort()
        let display = try await VirtualDisplay(width: 320, height: 240)
        let result = try await ChildProcess.run(screenpub, ["--display", display.name, "--port", "\(taken.port)", "--duration", "5"], timeout: 30)
        #expect(result.status == 2)
        #expect(
            result.standardError.contains(
                "cannot start the relay: cannot listen on 127.0.0.1:\(taken.port): another program listens there already (address in use); "
                    + "stop it, or give another port (--port)"), "\(result.standardError)")
        #expect(!result.standardOutput.contains("viewer:"), "no URL is printed for a relay that is not there")
    }

    @Test func badTargetsAreClearErrors() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let output = temporaryPath("x.webm")
        let existing = temporaryPath("existing.webm")
        try Data("keep!".utf8).write(to: URL(fileURLWithPath: existing))
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["--display", ":4343"], 2, "cannot open X display :4343"),
            (["--display", display.name, "--region", "300,200,100,100"], 2, "is not inside the 320×240 screen"),
            (["--display", display.name, "--region", "1,2,3"], 64, "--region must be X,Y,WIDTH,HEIGHT"),
            (["--display", display.name, "--window", "0x3fffff0"], 2, "there is no window 0x3fffff0"),
            (["--display", display.name, "--window", "banana"], 2, "no window on \(display.name) has a class or title matching \"banana\""),
            (["--display", display.name, "--window", "[abc"], 64, "--window takes a window id (decimal or 0x hex) or a glob"),
            (["--display", display.name, "--monitor", "-1"], 64, "--monitor takes an index from 0 or a monitor's name, got -1"),
            (["--display", display.name, "--monitor", "7"], 2, "there is no monitor 7"),
            (["--display", display.name, "--metadata", String(repeating: "m", count: 33)], 64, "33 bytes; the limit is 32 bytes"),
            (["--display", display.name, "--fps", "0"], 64, "--fps must be more than 0 and at most 120, got 0"),
            (["--display", display.name, "--fps", "-3"], 64, "--fps must be more than 0 and at most 120, got -3"),
            (["--display", display.name, "--codec", "h264"], 64, "WebM cannot carry h264; name the file .mkv"),
            (["--display", display.name, "--speed", "9"], 64, "--speed needs --codec av1, vp9 or vp8"),
            (["--display", display.name, "--codec", "av1", "--speed", "5"], 64, "--speed for av1 must be between 7 and 10"),
            (["--display", display.name, "--output", "/nonexistent-dir/x.webm"], 2, "cannot create /nonexistent-dir/x.webm"),
            (["--display", display.name, "--output", existing], 2, "exists (5 bytes); pass --overwrite"),
        ]
        for testCase in cases {
            var arguments = testCase.arguments
            if !arguments.contains("--output") { arguments += ["--output", output] }
            let result = try await ChildProcess.run(screenpub, arguments, timeout: 20)
            #expect(result.status == testCase.status, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(testCase.message), "\(arguments): \(result.standardError)")
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep!", "an existing recording is never lost")
    }

    @Test func helpAndVersion() async throws {
        let help = try await ChildProcess.run(screenpub, ["--help"])
        #expect(help.status == 0)
        for option in [
            "--fps", "--display", "--monitor", "--window", "--region", "--codec", "--bitrate", "--metadata", "--output", "--duration",
            "--no-cursor", "--verbose", "--config", "--control-socket", "--capture-retry", "Exit status", "status", "pause", "resume",
        ] {
            #expect(help.standardOutput.contains(option), "help mentions \(option)")
        }
        let version = try await ChildProcess.run(screenpub, ["--version"])
        #expect(version.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
        let subHelp = try await ChildProcess.run(screensub, ["--help"])
        #expect(subHelp.standardOutput.contains("--print-metadata"))
    }

    @Test func screensubReportsAnUnreadableFile() async throws {
        let result = try await ChildProcess.run(screensub, ["--input", "/nonexistent.webm"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("cannot open /nonexistent.webm"))
    }
}

/// screenpub → screenrelay (embedded) → screensub, as users run them.
@Suite(.watchdog()) struct ShareEndToEndTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"
    let screensub = ChildProcess.productsDirectory + "/screensub"

    @Test func aSharedScreenArrivesAtScreensubWithItsPixelsAndMetadata() async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        let colors = TestPattern.quadrantColors
        var windows: [UInt] = []
        for (index, color) in colors.enumerated() {
            windows.append(painter.createWindow(
                PixelRect(x: index % 2 * 320, y: index / 2 * 180, width: 320, height: 180),
                color: XPainter.pixel(red: color.r, green: color.g, blue: color.b)))
        }
        let share = try await RunningShare(["--display", display.name, "--duration", "60", "--metadata", "e2e check", "--no-cursor", "--keepalive", "0"])
        let (publisher, server, viewerToken) = (share.process, share.server, share.viewerToken)
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString).webm").path
        let pictures = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: pictures) }
        let subscribing = try ChildProcess(screensub, [
            "--server", server, "--token", viewerToken, "--count", "3", "--print-metadata", "--json", "--output", recording,
            "--frames", pictures,
        ])
        // Once the first frame has arrived, a change on screen makes another: the top-left quadrant turns white.
        // (Three frames: the keyframe, the change, and the refinement of the still picture, which comes a tick
        // after the keyframe or a second after the change, whichever the timing gives.)
        for _ in 0..<400 where !subscribing.outputSoFar.contains("\n") { try await Task.sleep(for: .milliseconds(50)) }
        painter.fill(window: windows[0], PixelRect(x: 0, y: 0, width: 320, height: 180), color: XPainter.pixel(red: 240, green: 240, blue: 240))
        let subscriber = await subscribing.wait(timeout: 30)
        #expect(subscriber.status == 0, "\(subscriber.standardError)")
        // A line per frame, then the summary.
        let lines = subscriber.standardOutput.split(separator: "\n").filter { $0.contains(#""kind":"video""#) }
        #expect(lines.count == 3)
        #expect(subscriber.standardOutput.split(separator: "\n").last?.contains(#""kind":"summary""#) == true)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["metadata"] as? String == "e2e check")
            #expect(object?["width"] as? Int == 640)
        }
        // The recorded frames decode to the painted quadrants.
        let reader = try WebMReader(path: recording)
        let frames = try reader.readAll()
        #expect(frames.count == 3)
        #expect(frames.first?.cue?.metadata == (try FrameMetadata(text: "e2e check")))
        let decoder = try makeVideoDecoder(for: reader.codec)
        var whiteTopLeft: [Bool] = []
        for frame in frames {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in
                    let white = TestPattern.difference(picture, x: 80, y: 45, (240, 240, 240)) <= 12
                    #expect(white || TestPattern.difference(picture, x: 80, y: 45, colors[0]) <= 12, "frame \(whiteTopLeft.count)")
                    for (x, y, color) in [(560, 45, colors[1]), (80, 315, colors[2]), (560, 315, colors[3])] {
                        #expect(TestPattern.difference(picture, x: x, y: y, color) <= 12, "frame \(whiteTopLeft.count) at \(x),\(y)")
                    }
                    whiteTopLeft.append(white)
                }
            }
        }
        // The painted quadrant first, then (from the change on) white.
        #expect(whiteTopLeft.count == 3 && whiteTopLeft.first == false && whiteTopLeft.last == true, "\(whiteTopLeft)")
        #expect(whiteTopLeft == whiteTopLeft.sorted { !$0 && $1 }, "\(whiteTopLeft)")
        // The PNGs screensub wrote show the same pictures (read back by ffmpeg).
        for (index, topLeft) in [(1, colors[0]), (3, (r: UInt8(240), g: UInt8(240), b: UInt8(240)))] {
            let png = "\(pictures)/frame-00000\(index).png"
            let raw = png + ".rgb"
            let converted = try await ChildProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
            #expect(converted.status == 0, "\(converted.standardError)")
            let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            #expect(rgb.count == 640 * 360 * 3)
            for (x, y, color) in [(80, 45, topLeft), (560, 315, colors[3])] where rgb.count == 640 * 360 * 3 {
                let at = (y * 640 + x) * 3
                let difference = max(abs(Int(rgb[at]) - Int(color.r)), abs(Int(rgb[at + 1]) - Int(color.g)), abs(Int(rgb[at + 2]) - Int(color.b)))
                #expect(difference <= 12, "PNG \(index) at \(x),\(y): \(rgb[at..<at + 3])")
            }
        }
        // Chat: screensub sends its standard input; the relay echoes it to everyone (screensub prints it) and
        // screenpub logs it.
        let chatInput = FileManager.default.temporaryDirectory.appendingPathComponent("chat-\(UUID().uuidString).txt").path
        try "hello from the terminal\n".write(toFile: chatInput, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: chatInput) }
        let chatting = try await ChildProcess(screensub, ["--server", server, "--token", viewerToken, "--chat"], standardInput: chatInput)
            .wait(timeout: 30)
        #expect(chatting.status == 0, "\(chatting.standardError)")
        #expect(chatting.standardOutput.contains("> hello from the terminal"), "\(chatting.standardOutput)")
        #expect(try await ChildProcess.run(screensub, ["--server", server, "--token", viewerToken, "--to", "x"]).status == 64)
        // SIGTERM ends the share cleanly: the stream is unpublished and the relay shut down.
        publisher.signal(SIGTERM)
        let published = await publisher.wait(timeout: 20)
        #expect(published.status == 0, "\(published.standardError)")
        #expect(published.standardError.contains("hello from the terminal"), "screenpub logs the chat line")
    }
}

/// What packaging/ ships, checked with the tools a distribution uses.
@Suite(.watchdog()) struct PackagingTests {
    /// packaging/, found from this source file.
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../packaging").standardized.path

    @Test func theSystemdUserUnitsVerifyClean() async throws {
        // systemd-analyze checks that ExecStart= exists: point the units at the binaries just built.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var units: [String] = []
        for name in ["screenpub", "screenrelay"] {
            let text = try String(contentsOfFile: "\(Self.packaging)/systemd/\(name).service", encoding: .utf8)
            let unit = "\(directory)/\(name).service"
            try text.replacingOccurrences(of: "/usr/bin/\(name)", with: "\(ChildProcess.productsDirectory)/\(name)")
                .write(toFile: unit, atomically: true, encoding: .utf8)
            units.append(unit)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory + "/runtime"
        let result = try await ChildProcess.run("/usr/bin/systemd-analyze", ["verify", "--man=no", "--user"] + units, environment: environment)
        #expect(result.status == 0)
        // systemd-analyze reports bad settings on standard error but still exits 0: nothing may be said.
        #expect(result.standardError.isEmpty, "\(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
    }

    /// The package `make deb` built (the Makefile's test target builds it before the tests run).
    static func builtPackage() async throws -> String {
        let version = try await ChildProcess.run(ChildProcess.productsDirectory + "/screenpub", ["--version"]).standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let arch = try await ChildProcess.run("/usr/bin/dpkg", ["--print-architecture"]).standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let path = "\(packaging)/../out/screenpub_\(version)_\(arch).deb"
        guard FileManager.default.fileExists(atPath: path) else {
            throw PackagingProblem("\(path) is missing: build it with `make deb` (`make test` does)")
        }
        return URL(fileURLWithPath: path).standardized.path
    }

    @Test func theDebHoldsBinariesUnitsManPagesCompletionsAndTheViewer() async throws {
        let package = try await Self.builtPackage()
        let contents = try await ChildProcess.run("/usr/bin/dpkg-deb", ["--contents", package])
        #expect(contents.status == 0)
        for path in [
            "./usr/bin/screenpub", "./usr/bin/screenrelay", "./usr/bin/screensub",
            "./usr/lib/systemd/user/screenpub.service", "./usr/lib/systemd/user/screenrelay.service",
            "./usr/share/man/man1/screenpub.1.gz", "./usr/share/man/man1/screenrelay.1.gz", "./usr/share/man/man1/screensub.1.gz",
            "./usr/share/bash-completion/completions/screenpub", "./usr/share/zsh/vendor-completions/_screenpub",
            "./usr/share/fish/vendor_completions.d/screenpub.fish", "./usr/share/screenpub/viewer/viewer.js",
            "./usr/share/screenpub/screenpub.desktop", "./usr/share/doc/screenpub/copyright",
            "./usr/share/doc/screenpub/examples/screenpub.toml", "./usr/share/doc/screenpub/README.md.gz",
            "./usr/share/doc/screenpub/docs/protocol.md.gz", "./usr/share/doc/screenpub/docs/performance.md.gz",
        ] {
            #expect(contents.standardOutput.contains(" \(path)\n"), "the package holds \(path)")
        }
        let depends = try await ChildProcess.run("/usr/bin/dpkg-deb", ["--field", package, "Depends"]).standardOutput
        for library in ["libx11-6", "libxext6", "libxdamage1", "libxfixes3", "libxrandr2", "libvpx7", "libyuv0", "libavformat59", "libsqlite3-0", "libpipewire-0.3-0", "libportal1", "libwayland-client0"] {
            #expect(depends.contains(library), "Depends: names \(library): \(depends)")
        }
        #expect(!depends.contains("swift"), "the Swift runtime is linked in: \(depends)")
        // lintian: no errors and no warnings (as root it says so on standard error; that is not a finding).
        let lint = try await ChildProcess.run("/usr/bin/lintian", [package], timeout: 300)
        let findings = lint.standardOutput.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(lint.status == 0 && findings.isEmpty, "lintian: \(lint.standardOutput)\(lint.standardError)")
    }

    @Test func theDebsBinariesRunFromTheUnpackedTreeAndTheRelayFindsItsViewer() async throws {
        let package = try await Self.builtPackage()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("deb-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try await ChildProcess.run("/usr/bin/dpkg-deb", ["-x", package, root]).status == 0)
        for command in ["screenpub", "screenrelay", "screensub"] {
            let version = try await ChildProcess.run("\(root)/usr/bin/\(command)", ["--version"])
            #expect(version.status == 0 && !version.standardOutput.isEmpty, "\(command): \(version.standardError)")
        }
        // The man pages render, UTF-8 intact, and say where the documentation is.
        for command in ["screenpub", "screenrelay", "screensub"] {
            let page = "\(root)/usr/share/man/man1/\(command).1.gz"
            let manual = try await ChildProcess.run(
                "/usr/bin/man", ["-l", page], environment: ["MANWIDTH": "200", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
            #expect(manual.status == 0 && manual.standardError.isEmpty, "\(command): \(manual.standardError)")
            #expect(manual.standardOutput.contains("/usr/share/doc/screenpub/README.md.gz"), "\(command)")
            #expect(manual.standardOutput.contains("EXAMPLES"), "\(command)")
            let summary = try await ChildProcess.run("/usr/bin/lexgrog", [page])
            #expect(summary.status == 0 && summary.standardOutput.contains("\"\(command) - "), "\(summary.standardOutput)")
        }
        let manual = try await ChildProcess.run(
            "/usr/bin/man", ["-l", "\(root)/usr/share/man/man1/screenpub.1.gz"], environment: ["MANWIDTH": "200", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(manual.standardOutput.contains("control socket") && manual.standardOutput.contains("AV1 7–10"), "\(manual.standardOutput)")
        // The relay from the package serves the viewer from ../share/screenpub/viewer beside its binary.
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENRELAY_SECRET"] = String(repeating: "s", count: 40)
        environment["SCREENRELAY_VIEWER_DIR"] = nil
        environment["XDG_CONFIG_HOME"] = root + "/config"
        let relay = try ChildProcess("\(root)/usr/bin/screenrelay", ["--port", "0", "--data-dir", root + "/state"], environment: environment)
        defer { relay.endInBackground(signal: SIGTERM, timeout: 10) }
        var port: String?
        for _ in 0..<100 where port == nil {
            try await Task.sleep(for: .milliseconds(50))
            port = relay.errorsSoFar.firstMatch(of: /listening on port (\d+)/).map { String($0.output.1) }
        }
        let served = try await ChildProcess.run("/usr/bin/curl", ["-sf", "http://127.0.0.1:\(port ?? "0")/viewer/viewer.js"])
        #expect(served.status == 0 && served.standardOutput.contains("WebCodecs"), "relay said: \(relay.errorsSoFar)")
    }

    @Test func theAutostartEntryValidates() async throws {
        let result = try await ChildProcess.run("/usr/bin/desktop-file-validate", ["\(Self.packaging)/autostart/screenpub.desktop"])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
    }

    @Test func theExampleConfigurationsAreAccepted() async throws {
        // No display and no secret: each stops at that (exit 2), after its settings were read without complaint (not 78).
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["SCREENRELAY_SECRET"] = nil
        environment["XDG_CONFIG_HOME"] = "/nonexistent"
        let share = try await ChildProcess.run(
            ChildProcess.productsDirectory + "/screenpub", ["--config", "\(Self.packaging)/examples/screenpub.toml", "--control-socket", "/nonexistent/s"],
            environment: environment)
        #expect(share.status == 2, "\(share.standardError)")
        let relay = try await ChildProcess.run(
            ChildProcess.productsDirectory + "/screenrelay", ["--config", "\(Self.packaging)/examples/screenrelay.toml", "--port", "0"],
            environment: environment)
        #expect(relay.status == 2, "\(relay.standardError)")
        #expect(relay.standardError.contains("secret"))
    }
}

struct PackagingProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
