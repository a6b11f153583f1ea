import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// screenpub as a background service: its control socket, SIGHUP reload and configuration layers, against a
/// private Xvfb, the embedded relay and a real screensub.
@Suite(.watchdog()) struct ServiceTests {
    @Test func theControlSocketPausesResumesReportsAndStops() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let share = try await RunningShare(["--display", display.name, "--no-cursor", "--fps", "10", "--keepalive", "1"])
        let socketMode = try FileManager.default.attributesOfItem(atPath: share.controlSocket)[.posixPermissions] as? Int
        #expect(socketMode == 0o600)
        let subscriber = try share.subscribe()
        let frames = { jsonLines(subscriber).filter { $0["index"] != nil } }
        #expect(try await eventually { frames().count >= 1 }, "\(subscriber.errorsSoFar)")

        // The publisher is told of a viewer once a second at most (the relay coalesces joins and leaves).
        #expect(try await eventually(30) { (try? await share.status())?["viewers"] as? Int == 1 }, "the viewer was not counted")
        var status = try await share.status()
        #expect(status["state"] as? String == "sharing")
        #expect(status["sessionId"] as? String == share.sessionId)
        #expect(status["framesPerSecond"] as? Double == 10)

        // Paused: the subscriber is told, and no frame comes while the screen changes (keepalives neither).
        let paused = try await share.control(["pause"])
        #expect(paused.status == 0, "\(paused.standardError)")
        let pausedEvent = { jsonLines(subscriber).contains { $0["event"] as? String == "streamPropertyChanged" && $0["hasVideo"] as? Bool == false } }
        #expect(try await eventually(20, pausedEvent))
        // A frame encoded as the pause came may still be on its way.
        try await Task.sleep(for: .milliseconds(300))
        let framesWhenPaused = frames().count
        for index in 0..<8 {
            painter.fill(PixelRect(x: index * 20, y: 0, width: 20, height: 20), color: 0xFFFFFF)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(frames().count == framesWhenPaused)
        status = try await share.status()
        #expect(status["state"] as? String == "paused")

        // Resumed: told, and the first frame after it is a keyframe showing what changed meanwhile.
        let resumed = try await share.control(["resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try await eventually { frames().count > framesWhenPaused })
        let lines = jsonLines(subscriber)
        let resumedAt = lines.lastIndex { $0["event"] as? String == "streamPropertyChanged" && $0["hasVideo"] as? Bool == true }
        #expect(resumedAt != nil)
        if let resumedAt, let firstAfter = lines[(resumedAt + 1)...].first(where: { $0["index"] != nil }) {
            #expect(firstAfter["keyframe"] as? Bool == true)
        }

        // Stopped: the command waits for screenpub to end; it exits 0 and the subscriber sees the stream end.
        let stopped = try await share.control(["stop"])
        #expect(stopped.status == 0, "\(stopped.standardError)")
        let outcome = await share.process.wait(timeout: 10)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let watched = await subscriber.wait(timeout: 10)
        #expect(watched.status == 0)
        #expect(!FileManager.default.fileExists(atPath: share.controlSocket))
        let afterwards = try await share.control(["status"])
        #expect(afterwards.status == 3)
        #expect(afterwards.standardError.contains("no screenpub is running"))
    }

    @Test func sighupWithANewFrameRateInTheConfigFileTakesEffectWithoutDroppingTheStream() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let share = try await RunningShare(["--display", display.name, "--no-cursor"], config: "fps = 2\nkeepalive = 0\n")
        let subscriber = try share.subscribe()
        // Capture times in seconds ("value/timescale" in screensub's JSON).
        let frameTimes = {
            jsonLines(subscriber).compactMap { line -> Double? in
                guard line["index"] != nil, let parts = (line["captureTime"] as? String)?.split(separator: "/"), parts.count == 2,
                    let value = Double(parts[0]), let timescale = Double(parts[1]), timescale > 0 else { return nil }
                return value / timescale
            }
        }
        #expect(try await eventually { frameTimes().count >= 1 })
        // The screen changes every 20 ms: each tick has something to send, so frames come one tick apart
        // (or a few ticks, when a loaded machine misses some).
        let animating = Task {
            var index = 0
            while !Task.isCancelled {
                index += 1
                painter.fill(PixelRect(x: 0, y: 0, width: 320, height: 240), color: index % 2 == 0 ? 0x202020 : 0xE0E0E0)
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { animating.cancel() }
        /// The capture-time steps between the frames sent in the next `seconds`.
        func steps(over seconds: Double) async throws -> [Double] {
            let before = frameTimes().count
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let times = frameTimes().dropFirst(max(0, before - 1))
            return zip(times.dropFirst(), times).map { $0 - $1 }
        }
        let slow = try await steps(over: 3)
        try "fps = 10\nkeepalive = 0\n".write(toFile: share.configFile, atomically: true, encoding: .utf8)
        share.process.signal(SIGHUP)
        #expect(try await eventually { (try? await share.status())?["framesPerSecond"] as? Double == 10 })
        // Subscribers hear the new rate, on the same stream.
        #expect(try await eventually {
            jsonLines(subscriber).contains { $0["event"] as? String == "streamPropertyChanged" && $0["estimatedFramesPerSecond"] as? Double == 10 }
        })
        try await Task.sleep(for: .milliseconds(500))
        let fast = try await steps(over: 3)
        // Ticks are 500 ms apart at 2 fps and 100 ms at 10 fps; missed ticks only lengthen a step, so the
        // shortest steps tell the rate however loaded the machine is.
        #expect(slow.count >= 2 && slow.min()! > 0.45, "steps at 2 fps: \(slow)")
        #expect(fast.count >= 4 && fast.sorted()[fast.count / 2] < 0.45 && fast.min()! < 0.15, "steps at 10 fps: \(fast)")
        #expect(share.process.errorsSoFar.contains("SIGHUP: restarting the capture"))
        // The stream went on: still subscribed, no end seen.
        #expect(!subscriber.outputSoFar.contains("ended"))
        share.process.signal(SIGTERM)
        await #expect(share.process.wait(timeout: 10).status == 0)
    }

    @Test func theCommandLineWinsOverTheEnvironmentWhichWinsOverTheFile() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let share = try await RunningShare(
            ["--display", display.name, "--fps", "4"], config: "fps = 2\nbitrate = 800\ncodec = \"vp9\"\nspeed = 7\n",
            environment: ["SCREENPUB_FPS": "3", "SCREENPUB_SPEED": "9", "SCREENPUB_BITRATE": "900"])
        let status = try await share.status()
        #expect(status["framesPerSecond"] as? Double == 4)
        #expect(status["bitrateKbps"] as? Int == 900)
        let stopped = try await share.control(["stop"])
        #expect(stopped.status == 0)
    }

    @Test func aBadConfigFileOrVariableNamesWhereAndExits78() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/config/screenpub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/config/screenrelay", withIntermediateDirectories: true)
        let environment = RunningShare.environment(home: home)
        let cases: [(file: String, expected: String)] = [
            ("fps = 5\n\n# pick a rate\nfps_typo = 3\n", "config.toml line 4: unknown key 'fps_typo'"),
            ("server = \"http://relay:8090\"\nbitrate = 99999999\n", "config.toml line 2 (bitrate = 99999999): --bitrate must be between"),
            ("cursor = \"no\"\n", "config.toml line 1: 'cursor' must be true or false"),
            ("fps = [5\n", "config.toml line 1: "),
        ]
        for (file, expected) in cases {
            try file.write(toFile: home + "/config/screenpub/config.toml", atomically: true, encoding: .utf8)
            let result = try await ChildProcess.run(RunningShare.screenpub, ["--duration", "1"], environment: environment)
            #expect(result.status == 78, "\(file)")
            #expect(result.standardError.contains(expected), "\(result.standardError)")
        }
        try "".write(toFile: home + "/config/screenpub/config.toml", atomically: true, encoding: .utf8)
        var withVariable = environment
        withVariable["SCREENPUB_FPS"] = "fast"
        let variable = try await ChildProcess.run(RunningShare.screenpub, ["--duration", "1"], environment: withVariable)
        #expect(variable.status == 78)
        #expect(variable.standardError.contains("$SCREENPUB_FPS"), "\(variable.standardError)")
        // A file named on the command line must exist.
        let missing = try await ChildProcess.run(RunningShare.screenpub, ["--config", home + "/nothing.toml"], environment: environment)
        #expect(missing.status == 78)
        #expect(missing.standardError.contains("nothing.toml"))

        try "port = 8090\nhost = \"127.0.0.1\"\nport = 1\n".write(toFile: home + "/config/screenrelay/config.toml", atomically: true, encoding: .utf8)
        let relay = try await ChildProcess.run(ChildProcess.productsDirectory + "/screenrelay", [], environment: environment)
        #expect(relay.status == 78)
        #expect(relay.standardError.contains("config.toml line 3"), "\(relay.standardError)")
        try "port = 70000\n".write(toFile: home + "/config/screenrelay/config.toml", atomically: true, encoding: .utf8)
        let badPort = try await ChildProcess.run(ChildProcess.productsDirectory + "/screenrelay", [], environment: environment)
        #expect(badPort.status == 78)
        #expect(badPort.standardError.contains("config.toml line 1 (port = 70000): --port must be between 0 and 65535"), "\(badPort.standardError)")
    }

    @Test func aSecondShareRefusesASocketInUseAndControlCommandsNeedARunningShare() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let share = try await RunningShare(["--display", display.name])
        let second = try await ChildProcess.run(
            RunningShare.screenpub, ["--display", display.name, "--port", "0"], environment: RunningShare.environment(home: share.home))
        #expect(second.status == 2)
        #expect(second.standardError.contains("already running"), "\(second.standardError)")
        // The first is unharmed.
        await #expect(try share.status()["state"] as? String == "sharing")
        await #expect(try share.control(["stop"]).status == 0)
        await #expect(share.process.wait(timeout: 10).status == 0)
    }

    @Test func withCaptureRetryAVanishedDisplayIsWaitedForAndTheStreamGoesOn() async throws {
        var display: VirtualDisplay? = try await VirtualDisplay(width: 320, height: 240)
        let number = Int(display!.name.dropFirst())!
        let share = try await RunningShare(["--display", display!.name, "--no-cursor", "--capture-retry", "0.3", "--keepalive", "0"])
        let subscriber = try share.subscribe()
        let frames = { jsonLines(subscriber).filter { $0["index"] != nil } }
        #expect(try await eventually { frames().count >= 1 })

        // The X server dies: screenpub waits instead of exiting, and says so.
        await display!.stopAndWait()
        display = nil
        #expect(try await eventually { (try? await share.status())?["state"] as? String == "waitingForDisplay" })
        #expect(!share.process.hasExited, "screenpub exited: \(share.process.errorsSoFar)")
        let framesBefore = frames().count

        // It comes back on the same display: capture resumes on the same stream, with a keyframe.
        let returned = try await VirtualDisplay(width: 400, height: 300, displayNumber: number)
        let painter = try XPainter(displayName: returned.name)
        painter.fill(PixelRect(x: 0, y: 0, width: 100, height: 100), color: 0xFFFFFF)
        #expect(try await eventually { frames().count > framesBefore }, "\(share.process.errorsSoFar)")
        let first = frames()[framesBefore]
        #expect(first["keyframe"] as? Bool == true)
        #expect(first["width"] as? Int == 400)
        await #expect(try share.status()["state"] as? String == "sharing")
        #expect(share.process.errorsSoFar.contains("trying again in 0.3 s"))
        await #expect(try share.control(["stop"]).status == 0)
        let outcome = await share.process.wait(timeout: 10)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        _ = returned
    }
}
