import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// The README's relay commands as written (ports made free ones, placeholders filled from what the commands
/// before them printed), against real relays, screenpub and screensub on Xvfb, each answer checked.
@Suite(.watchdog()) struct ReadmeRelayTests {
    static let secret = "readme-test-relay-secret-of-32-bytes-or-more"

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// `screenrelay` serving on `port` with the shell's environment (its secret, its configuration).
    static func relay(_ shell: ReadmeShell, port: Int, _ arguments: [String] = []) async throws -> ChildProcess {
        let relay = try ChildProcess(RunningRelayProcess.screenrelay, ["--port", String(port)] + arguments, environment: shell.environment)
        guard try await eventually(20, { relay.errorsSoFar.contains("listening on port \(port)") }) else {
            throw RunningRelayProcess.Failure(description: "screenrelay did not start: \(relay.errorsSoFar)")
        }
        return relay
    }

    /// A publisher of `display` into `session` through the relay on `port`, made with the admin command's token.
    static func publisher(_ shell: ReadmeShell, port: Int, token: String, display: VirtualDisplay) throws -> ChildProcess {
        try ChildProcess(
            RunningShare.screenpub,
            ["--server", "http://127.0.0.1:\(port)", "--token", token, "--display", display.name, "--fps", "10", "--keepalive", "0.2", "--control-socket", ""],
            environment: shell.environment)
    }

    /// A token minted with the admin command (not a README line here), for the roles a scenario's placeholders need.
    static func token(_ shell: ReadmeShell, port: Int, session: String, role: String, name: String = "test") async throws -> String {
        let minted = try await ChildProcess.run(
            RunningRelayProcess.screenrelay, ["token", session, "--role", role, "--name", name, "--server", "http://127.0.0.1:\(port)", "--json"],
            environment: shell.environment)
        return try #require(object(minted.standardOutput)["token"] as? String, "\(minted.standardError)")
    }

    @Test func live() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let window = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 200, green: 0, blue: 0))
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.live, display: display, environment: ["SCREENRELAY_SECRET": Self.secret])
        shell.substitutions = [("8090", String(port))]
        let share = try shell.start("screenpub --port 8090")
        let session = try #require(try await shell.printed(share, "session:"), "\(share.errorsSoFar)")
        let relayURL = try await shell.printed(share, "relay:")
        #expect(relayURL == "ws://127.0.0.1:\(port)/ws")
        let viewer = try #require(try await shell.printed(share, "viewer:"))
        #expect(viewer.hasPrefix("http://127.0.0.1:\(port)/view/\(session)?token="))
        let subscriberToken = String(viewer.split(separator: "token=").last ?? "")
        shell.substitutions.append(("<subscriber token>", subscriberToken))

        let printing = try shell.start("screensub --server http://127.0.0.1:8090 --token <subscriber token> --print-metadata")
        #expect(try await eventually(20) { printing.outputSoFar.contains("key") }, "\(printing.outputSoFar) \(printing.errorsSoFar)")
        printing.signal(SIGINT)

        // 100 frames at 5 fps of a screen that changes at every tick.
        let recording = try shell.start("screensub --server http://127.0.0.1:8090 --token <subscriber token> --output live.webm --count 100 --frames shots/")
        var step = 0
        while !recording.hasExited && step < 600 {
            painter.fill(window: window, PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: UInt8(step % 2 * 200), green: 0, blue: 100))
            try await Task.sleep(for: .milliseconds(100))
            step += 1
        }
        #expect(await recording.wait(timeout: 10).status == 0, "\(recording.errorsSoFar)")
        let frames = try Pictures.measured(shell.path("live.webm")) { $0.width }
        #expect(frames.count == 100 && frames.allSatisfy { $0 == 320 })
        // Every picture shown, numbered from 1: the frames received less the catch-up ones the relay sent to start
        // the decoder at the newest picture (decoded, not shown).
        let shots = try FileManager.default.contentsOfDirectory(atPath: shell.path("shots")).filter { $0.hasSuffix(".png") }
        #expect(shots.count >= 50 && shots.count <= 100, "\(shots.count) pictures")
        #expect(shots.contains("frame-000001.png") && shots.contains(String(format: "frame-%06d.png", shots.count)))

        // One capture, three destinations: the relay twice (by http:// with the token, and by ws://) and a file.
        let publisherToken = try await Self.token(shell, port: port, session: session, role: "publisher")
        shell.substitutions = [
            ("relay:8090", "127.0.0.1:\(port)"), ("other:8090", "127.0.0.1:\(port)"), ("/tmp/share.webm", shell.path("share.webm")),
            ("<publisher token>", publisherToken),
        ] + shell.substitutions
        shell.environment["SCREENPUB_CONTROL_SOCKET"] = ""  // the first share has the default socket
        let three = try shell.start("screenpub --server http://relay:8090 --to file:/tmp/share.webm --to ws://other:8090/ws --token <publisher token>")
        let streams = try await eventually(20) {
            let summary = try? await ChildProcess.run(
                "/usr/bin/curl", ["-s", "-H", "Authorization: Bearer \(Self.secret)", "http://127.0.0.1:\(port)/session/\(session)"])
            return (Self.object(summary?.standardOutput ?? "")["streams"] as? [Any])?.count == 3
        }
        #expect(streams, "\(three.errorsSoFar)")
        three.signal(SIGINT)
        #expect(await three.wait(timeout: 20).status == 0, "\(three.errorsSoFar)")
        #expect(try Pictures.measured(shell.path("share.webm")) { $0.width }.first == 320)
        shell.expectAllRun()
    }

    @Test func standaloneRelay() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.standaloneRelay, display: display, environment: ["SCREENPUB_CONTROL_SOCKET": ""])
        shell.substitutions = [("8090", String(port))]
        try await shell.set("export SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)")
        #expect((shell.environment["SCREENRELAY_SECRET"]?.count ?? 0) >= 40)
        let relay = try shell.start("screenrelay --host 127.0.0.1 --port 8090 &")
        #expect(try await eventually(20) { relay.errorsSoFar.contains("listening on port \(port)") }, "\(relay.errorsSoFar)")
        let made = try shell.start("screenpub --server http://127.0.0.1:8090")
        let session = try #require(try await shell.printed(made, "session:"), "\(made.errorsSoFar)")
        let viewer = try #require(try await shell.printed(made, "viewer:"))
        let subscriber = try ChildProcess(
            RunningShare.screensub, ["--server", "http://127.0.0.1:\(port)", "--token", String(viewer.split(separator: "token=").last ?? ""), "--count", "1"])
        #expect(await subscriber.wait(timeout: 30).status == 0, "\(subscriber.errorsSoFar)")
        shell.substitutions.append(("<publisher token>", try await Self.token(shell, port: port, session: session, role: "publisher")))
        let second = try shell.start("screenpub --server http://127.0.0.1:8090 --token <publisher token>")
        #expect(try await eventually(20) { second.errorsSoFar.contains("publishing") || second.errorsSoFar.contains("published") }, "\(second.errorsSoFar)")
        #expect(try await eventually(20) {
            let now = try? await ChildProcess.run(
                "/usr/bin/curl", ["-s", "-H", "Authorization: Bearer \(shell.environment["SCREENRELAY_SECRET"] ?? "")", "http://127.0.0.1:\(port)/session/\(session)"])
            return (Self.object(now?.standardOutput ?? "")["streams"] as? [Any])?.count == 2
        }, "\(second.errorsSoFar)")
        shell.expectAllRun()
    }

    @Test func admin() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.admin, display: display, environment: ["SCREENRELAY_SECRET": Self.secret])
        try FileManager.default.createDirectory(atPath: shell.path(".config/screenrelay"), withIntermediateDirectories: true)
        try "port = \(port)\n".write(toFile: shell.path(".config/screenrelay/config.toml"), atomically: true, encoding: .utf8)
        let relay = try await Self.relay(shell, port: port)
        defer { relay.endInBackground() }

        var outcome = try await shell.run("screenrelay session create --title \"Friday demo\"")
        let session = try #require(outcome.standardOutput.split(separator: "\n").first { $0.hasPrefix("session:") }?.split(separator: " ").last.map(String.init))
        let publish = try #require(outcome.standardOutput.split(separator: "\n").first { $0.hasPrefix("publish:") }?.split(separator: " ").last.map(String.init))
        shell.substitutions = [("<sessionId>", session)]
        outcome = try await shell.run("screenrelay sessions")
        #expect(outcome.standardOutput.contains(session) && outcome.standardOutput.contains("Friday demo"), "\(outcome.standardOutput)")
        outcome = try await shell.run("screenrelay token <sessionId> --name Ada --expires 2h")
        #expect(outcome.standardOutput.contains("role:    subscriber") && outcome.standardOutput.contains("viewer:  http://127.0.0.1:\(port)/view/\(session)?token="), "\(outcome.standardOutput)")
        outcome = try await shell.run("screenrelay token <sessionId> --role moderator --name Mo")
        #expect(outcome.standardOutput.contains("role:    moderator"), "\(outcome.standardOutput)")

        let publisher = try Self.publisher(shell, port: port, token: publish, display: display)
        defer { publisher.signal(SIGKILL) }
        #expect(try await eventually(20) { publisher.errorsSoFar.contains("publishing") || publisher.errorsSoFar.contains("published") }, "\(publisher.errorsSoFar)")
        outcome = try await shell.run("screenrelay archive start <sessionId> --name standup")
        let archive = try #require(outcome.standardOutput.split(separator: " ").dropFirst().first.map(String.init), "\(outcome.standardOutput) \(outcome.standardError)")
        shell.substitutions.append(("<archiveId>", archive))
        try await Task.sleep(for: .seconds(2))
        outcome = try await shell.run("screenrelay archive list")
        #expect(outcome.standardOutput.contains(archive) && outcome.standardOutput.contains("standup"), "\(outcome.standardOutput)")
        outcome = try await shell.run("screenrelay archive stop <archiveId>")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        outcome = try await shell.run("screenrelay archive download <archiveId> -o standup.webm")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try Pictures.measured(shell.path("standup.webm")) { $0.width }.count >= 2)
        outcome = try await shell.run("screenrelay archive delete <archiveId>")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let after = try await ChildProcess.run(RunningRelayProcess.screenrelay, ["archive", "list"], environment: shell.environment)
        #expect(!after.standardOutput.contains(archive), "\(after.standardOutput)")
        shell.expectAllRun()
    }

    @Test func httpAPI() async throws {
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.httpAPI, environment: ["SCREENRELAY_SECRET": Self.secret])
        shell.substitutions = [("8090", String(port))]
        let relay = try await Self.relay(shell, port: port)
        defer { relay.endInBackground() }
        var outcome = try await shell.run(#"curl -s -X POST -H "Authorization: Bearer $SCREENRELAY_SECRET" -d '{"title":"Friday demo"}' http://127.0.0.1:8090/session"#)
        let created = Self.object(outcome.standardOutput)
        let session = try #require(created["sessionId"] as? String, "\(outcome.standardOutput)")
        #expect(created["relayURL"] as? String == "ws://127.0.0.1:\(port)/ws" && (created["viewerURL"] as? String)?.contains("?token=") == true, "\(created)")
        shell.substitutions.append(("<sessionId>", session))
        outcome = try await shell.run(#"curl -s -X POST -H "Authorization: Bearer $SCREENRELAY_SECRET" -d '{"role":"subscriber","expiresIn":3600,"data":"name=Ada"}' http://127.0.0.1:8090/session/<sessionId>/token"#)
        let minted = Self.object(outcome.standardOutput)
        let token = try #require(minted["token"] as? String, "\(outcome.standardOutput)")
        #expect(minted["role"] as? String == "subscriber" && minted["sessionId"] as? String == session)
        shell.substitutions.append(("<any token of it>", token))
        outcome = try await shell.run(#"curl -s -H "Authorization: Bearer $SCREENRELAY_SECRET" http://127.0.0.1:8090/session"#)
        #expect(((Self.object(outcome.standardOutput)["items"] as? [[String: Any]]) ?? []).contains { $0["sessionId"] as? String == session }, "\(outcome.standardOutput)")
        outcome = try await shell.run(#"curl -s "http://127.0.0.1:8090/session/<sessionId>?token=<any token of it>""#)
        #expect(Self.object(outcome.standardOutput)["title"] as? String == "Friday demo", "\(outcome.standardOutput)")

        // Someone in the session hears the signal.
        let listener = try ChildProcess(
            RunningShare.screensub, ["--server", "http://127.0.0.1:\(port)", "--token", token, "--chat"], standardInput: try shell.openInput().path)
        defer { listener.signal(SIGKILL) }
        try await Task.sleep(for: .seconds(1))
        outcome = try await shell.run(#"curl -s -X POST -H "Authorization: Bearer $SCREENRELAY_SECRET" -d '{"type":"chat","data":"the relay restarts at 5"}' http://127.0.0.1:8090/session/<sessionId>/signal"#)
        #expect(outcome.status == 0 && outcome.standardOutput.isEmpty, "\(outcome.standardOutput)")
        #expect(try await eventually(30) { listener.outputSoFar.contains("the relay restarts at 5") }, "\(listener.outputSoFar) \(listener.errorsSoFar)")
        outcome = try await shell.run("curl -s http://127.0.0.1:8090/healthz")
        #expect(outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        outcome = try await shell.run("curl -s http://127.0.0.1:8090/metrics")
        #expect(outcome.standardOutput.contains("screenrelay_sessions") && outcome.standardOutput.contains("screenrelay_connections"), "\(outcome.standardOutput.prefix(400))")
        shell.expectAllRun()
    }
}

extension ReadmeRelayTests {
    @Test func archives() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(.archives, display: display, environment: ["SCREENPUB_FPS": "10", "SCREENPUB_KEEPALIVE": "0.2"])
        shell.substitutions = [("8090", String(port))]
        try await shell.set("export SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)")
        let share = try shell.start("screenpub --port 8090 &")
        let session = try #require(try await shell.printed(share, "session:"), "\(share.errorsSoFar)")
        try await shell.set("auth=\"Authorization: Bearer $SCREENRELAY_SECRET\"")
        shell.substitutions.append(("<sessionId>", session))
        var outcome = try await shell.run(#"curl -s -X POST -H "$auth" -d '{"sessionId":"<sessionId>","name":"standup"}' http://127.0.0.1:8090/archive"#)
        let started = Self.object(outcome.standardOutput)
        let archive = try #require(started["id"] as? String, "\(outcome.standardOutput)")
        #expect(started["status"] as? String == "started" && started["name"] as? String == "standup")
        shell.substitutions.append(("<archiveId>", archive))
        try await Task.sleep(for: .seconds(2))
        outcome = try await shell.run(#"curl -s -X POST -H "$auth" http://127.0.0.1:8090/archive/<archiveId>/stop"#)
        #expect(try await eventually(20) {
            let now = try? await shell.run(#"curl -s -H "$auth" http://127.0.0.1:8090/archive/<archiveId>"#)
            return Self.object(now?.standardOutput ?? "")["status"] as? String == "available"
        }, "\(outcome.standardOutput)")
        outcome = try await shell.run(#"curl -s -H "$auth" "http://127.0.0.1:8090/archive?sessionId=<sessionId>""#)
        #expect(((Self.object(outcome.standardOutput)["items"] as? [[String: Any]]) ?? []).contains { $0["id"] as? String == archive }, "\(outcome.standardOutput)")
        outcome = try await shell.run(#"curl -s -H "$auth" -o standup.webm http://127.0.0.1:8090/archive/<archiveId>/download"#)
        #expect(try Pictures.measured(shell.path("standup.webm")) { $0.width }.count >= 5)
        outcome = try await shell.run(#"curl -s -H "$auth" http://127.0.0.1:8090/archive/<archiveId>/metadata"#)
        #expect(outcome.standardOutput.contains("Z"), "every frame's capture time: \(outcome.standardOutput.prefix(300))")
        outcome = try await shell.run("screensub --input standup.webm --print-metadata")
        #expect(outcome.status == 0 && outcome.standardOutput.split(separator: "\n").count >= 5, "\(outcome.standardOutput) \(outcome.standardError)")
        outcome = try await shell.run(#"curl -s -X DELETE -H "$auth" http://127.0.0.1:8090/archive/<archiveId>"#)
        let gone = try await ChildProcess.run(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", shell.environment["auth"] ?? "", "http://127.0.0.1:\(port)/archive/\(archive)"])
        #expect(gone.standardOutput == "404", "\(gone.standardOutput)")
        shell.expectAllRun()
    }

    @Test func chat() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let share = try await RunningShare(["--display", display.name], environment: ["SCREENRELAY_SECRET": Self.secret])
        let port = Int(share.server.split(separator: ":").last ?? "") ?? 0
        let shell = try ReadmeShell(.chat, display: display, environment: ["SCREENRELAY_SECRET": Self.secret])
        let ada = try await Self.token(shell, port: port, session: share.sessionId, role: "subscriber", name: "Ada")
        shell.substitutions = [("8090", String(port)), ("<token>", ada)]
        let input = try shell.openInput()
        let terminal = try shell.start("screensub --server http://127.0.0.1:8090 --token <token> --chat", input: input.path)
        try await Task.sleep(for: .seconds(1))
        let once = try await shell.run("echo \"back in 5\" | screensub --server http://127.0.0.1:8090 --token <token> --chat")
        #expect(once.status == 0, "\(once.standardError)")
        #expect(try await eventually(30) { terminal.outputSoFar.contains("back in 5") }, "\(terminal.outputSoFar) \(terminal.errorsSoFar)")
        #expect(try await eventually(30) { share.process.errorsSoFar.contains("chat <Ada> back in 5") }, "\(share.process.errorsSoFar)")
        shell.type("typed at the terminal", into: input.writer)
        #expect(try await eventually(30) { share.process.errorsSoFar.contains("chat <Ada> typed at the terminal") }, "\(share.process.errorsSoFar)")
        shell.expectAllRun()
    }
}
