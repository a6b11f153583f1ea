import Foundation
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import Testing

/// What a new user meets first: mistakes answered with sentences they can act on, and screensub saying what
/// it waits for and which frames are old.
@Suite(.watchdog()) struct EverydayUseTests {
    let screenpub = RunningShare.screenpub
    let screensub = RunningShare.screensub

    private func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("everyday-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func mistakesAreAnsweredWithSentences() async throws {
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") && !$0.key.hasPrefix("SCREENRELAY_") }
        environment["XDG_RUNTIME_DIR"] = nil
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_STATE_HOME"] = home + "/state"

        // No runtime directory: like any "no screenpub is running" (3), not a usage error.
        let status = try await ChildProcess.run(screenpub, ["status"], environment: environment)
        #expect(status.status == 3 && status.standardError.contains("no screenpub is running here"), "\(status.standardError)")

        // A file name that promises another container is refused before anything starts.
        let mp4 = try await ChildProcess.run(screenpub, ["--output", home + "/x.mp4"], environment: environment)
        #expect(mp4.status == 64 && mp4.standardError.contains("screenpub records WebM") && mp4.standardError.contains(".webm"), "\(mp4.standardError)")
        #expect(!FileManager.default.fileExists(atPath: home + "/x.mp4"))

        // The relay without a secret says where one goes.
        let relay = try await ChildProcess.run(RunningRelayProcess.screenrelay, ["--port", "0"], environment: environment)
        #expect(relay.status == 2 && relay.standardError.contains("no relay secret is set"), "\(relay.standardError)")
        #expect(relay.standardError.contains(home + "/config/screenrelay/secret"))
    }

    @Test func aRelayOnATakenPortSaysWhatToChangeAndExitsTwo() async throws {
        let taken = try RefusingLoopbackPort()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = RunningRelayProcess.secret
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        environment["XDG_STATE_HOME"] = home + "/state"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        let relay = try await ChildProcess.run(RunningRelayProcess.screenrelay, ["--port", "\(taken.port)"], environment: environment, timeout: 30)
        #expect(relay.status == 2, "\(relay.standardError)")
        #expect(
            relay.standardError.contains(
                "cannot start: cannot listen on 127.0.0.1:\(taken.port): another program listens there already (address in use); "
                    + "stop it, or give another port (--port)"), "\(relay.standardError)")
    }

    @Test func aShareThatNeverReachedItsRelayFails() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let result = try await ChildProcess.run(
            screenpub, ["--display", display.name, "--server", "http://127.0.0.1:1", "--token", "x", "--duration", "2", "--control-socket", ""],
            timeout: 30)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("cannot connect to the relay at ws://127.0.0.1:1/ws: nothing listens there (connection refused)"))
        #expect(result.standardError.contains("nothing was published: ws://127.0.0.1:1/ws was never reached"), "\(result.standardError)")
        #expect(result.standardError.contains("never reached ws://127.0.0.1:1/ws") && !result.standardError.contains("published to"))
    }

    @Test func theRelaysAddressSaysWhatItIs() async throws {
        let relay = try await RunningRelayProcess()
        let response = try await RelayHTTPClient().send("GET", "http://127.0.0.1:\(relay.port)/")
        let page = String(decoding: response.body, as: UTF8.self)
        #expect(response.status == 200 && page.contains("screenpub session server") && page.contains("/view/SESSION?token="), "\(page)")
    }

    @Test func screensubSaysItWaitsAndMarksCatchUpFrames() async throws {
        let relay = try await RunningRelayProcess()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = RunningRelayProcess.secret
        let server = "http://127.0.0.1:\(relay.port)"
        let made = try await ChildProcess.run(
            RunningRelayProcess.screenrelay, ["session", "create", "--json", "--server", server], environment: environment)
        let session = try #require(try JSONSerialization.jsonObject(with: Data(made.standardOutput.utf8)) as? [String: Any])
        let sessionId = try #require(session["sessionId"] as? String)
        let publisherToken = try #require(session["token"] as? String)
        func viewerToken() async throws -> String {
            let minted = try await ChildProcess.run(
                RunningRelayProcess.screenrelay, ["token", sessionId, "--name", "Sub", "--json", "--server", server], environment: environment)
            return try #require((try JSONSerialization.jsonObject(with: Data(minted.standardOutput.utf8)) as? [String: Any])?["token"] as? String)
        }

        // Nobody publishes yet.
        let early = try ChildProcess(screensub, ["--server", server, "--token", try await viewerToken(), "--print-metadata", "--count", "1"])
        defer { early.endInBackground(signal: SIGKILL) }
        #expect(try await eventually(20) { early.outputSoFar.contains("waiting for a screen to be shared…") }, "\(early.outputSoFar)")

        // A still screen shared for a while: a late joiner's first frames are the relay's catch-up, marked so.
        let display = try await VirtualDisplay(width: 320, height: 240)
        let share = try ChildProcess(
            screenpub, ["--display", display.name, "--server", server, "--token", publisherToken, "--no-cursor", "--control-socket", ""])
        defer { share.endInBackground(signal: SIGKILL) }
        let earlyOutcome = await early.wait(timeout: 30)
        #expect(earlyOutcome.status == 0, "\(earlyOutcome.standardError)")
        try await Task.sleep(for: .seconds(2))
        let late = try ChildProcess(screensub, ["--server", server, "--token", try await viewerToken(), "--print-metadata", "--json", "--count", "1"])
        defer { late.endInBackground(signal: SIGKILL) }
        let lateOutcome = await late.wait(timeout: 30)
        #expect(lateOutcome.status == 0, "\(lateOutcome.standardError)")
        let lines = lateOutcome.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let first = try #require(lines.first { $0["kind"] as? String == "video" }, "\(lateOutcome.standardOutput)")
        #expect(first["catchUp"] as? Bool == true, "\(first)")
        #expect(first["latencyMilliseconds"] == nil, "a catch-up frame reports no latency")
        let text = try ChildProcess(screensub, ["--server", server, "--token", try await viewerToken(), "--print-metadata", "--count", "1", "--verbose"])
        defer { text.endInBackground(signal: SIGKILL) }
        let textOutcome = await text.wait(timeout: 30)
        #expect(textOutcome.status == 0)
        #expect(textOutcome.standardOutput.contains("catch-up (drawn "), "\(textOutcome.standardOutput)")
        #expect(textOutcome.standardError.contains("subscribing to stream"), "--verbose tells the progress: \(textOutcome.standardError)")
    }
}
