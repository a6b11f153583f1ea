import Foundation
import ScreenRecording
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import Testing

/// `screenrelay session|sessions|token|archive` against a real relay process, as an operator runs them.
@Suite(.watchdog()) struct RelayAdminTests {
    let screenrelay = RunningRelayProcess.screenrelay

    /// The admin command's environment: the relay's secret, nothing of the machine's user.
    private func environment(_ home: String, secret: String? = RunningRelayProcess.secret) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = secret
        environment["XDG_CONFIG_HOME"] = home + "/admin-config"
        return environment
    }

    private func admin(_ relay: RunningRelayProcess, _ arguments: [String], secret: String? = RunningRelayProcess.secret) async throws
        -> ChildProcess.Outcome
    {
        try await ChildProcess.run(
            screenrelay, arguments + ["--server", "http://127.0.0.1:\(relay.port)"], environment: environment(relay.home, secret: secret),
            timeout: 30)
    }

    private func json(_ outcome: ChildProcess.Outcome) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any], "\(outcome.standardError)")
    }

    private func items(_ outcome: ChildProcess.Outcome) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [[String: Any]], "\(outcome.standardError)")
    }

    @Test func sessionsTokensAndArchivesWithoutCurl() async throws {
        let relay = try await RunningRelayProcess()
        let display = try await VirtualDisplay(width: 320, height: 240)

        // A titled session: its id, the publisher's token and a viewer link.
        let created = try await admin(relay, ["session", "create", "--title", "Friday demo", "--json"])
        #expect(created.status == 0, "\(created.standardError)")
        let session = try #require(try json(created)["sessionId"] as? String)
        #expect((try json(created)["viewerURL"] as? String)?.contains("/view/\(session)?token=") == true)
        let text = try await admin(relay, ["session", "create"])
        #expect(text.standardOutput.contains("viewer:  http://127.0.0.1:\(relay.port)/view/"), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("publish: screenpub --server http://127.0.0.1:\(relay.port) --token "), "\(text.standardOutput)")

        // A share and a named viewer show up in `sessions`.
        let share = try await relay.share(display)
        defer { share.process.endInBackground(signal: SIGKILL) }
        let minted = try await admin(relay, ["token", share.session, "--name", "Ada Lovelace", "--expires", "2h", "--json"])
        #expect(minted.status == 0, "\(minted.standardError)")
        let token = try #require(try json(minted)["token"] as? String)
        #expect(try json(minted)["role"] as? String == "subscriber")
        #expect((try json(minted)["viewerURL"] as? String)?.hasSuffix("/view/\(share.session)?token=\(token)") == true)
        let expiry = try #require(ISO8601DateFormatter().date(from: try json(minted)["expiresAt"] as? String ?? ""))
        #expect(abs(expiry.timeIntervalSinceNow - 7200) < 120)
        let viewer = try ChildProcess(RunningShare.screensub, ["--server", "http://127.0.0.1:\(relay.port)", "--token", token, "--print-metadata"])
        defer { viewer.endInBackground(signal: SIGKILL) }
        var listed: [String: Any] = [:]
        #expect(
            try await eventually(20) {
                let sessions = (try? await self.items(self.admin(relay, ["sessions", "--json"]))) ?? []
                listed = sessions.first { $0["sessionId"] as? String == share.session } ?? [:]
                return listed["viewers"] as? Int == 1 && (listed["streams"] as? [[String: Any]])?.count == 1
            }, "\(listed)")
        #expect(listed["publishers"] as? Int == 1)
        let stream = try #require((listed["streams"] as? [[String: Any]])?.first)
        #expect(stream["videoType"] as? String == "screen" && stream["width"] as? Int == 320 && stream["subscribers"] as? Int == 1)
        let table = try await admin(relay, ["sessions"])
        #expect(table.standardOutput.contains("Friday demo") && table.standardOutput.contains("320x240"), "\(table.standardOutput)")

        // An archive: started, growing while it records, stopped, downloaded, deleted.
        let started = try await admin(relay, ["archive", "start", share.session, "--name", "demo", "--json"])
        #expect(started.status == 0, "\(started.standardError)")
        let archive = try #require(try json(started)["id"] as? String)
        #expect(
            try await eventually(20) {
                let archives = (try? await self.items(self.admin(relay, ["archive", "list", share.session, "--json"]))) ?? []
                guard let current = archives.first(where: { $0["id"] as? String == archive }) else { return false }
                return current["status"] as? String == "started" && (current["size"] as? Int ?? 0) > 0 && (current["duration"] as? Double ?? 0) > 0.5
            })
        let stopped = try await admin(relay, ["archive", "stop", archive, "--json"])
        #expect(try json(stopped)["status"] as? String == "available", "\(stopped.standardOutput)")
        let file = relay.home + "/demo.webm"
        let downloaded = try await admin(relay, ["archive", "download", archive, "--output", file])
        #expect(downloaded.status == 0 && downloaded.standardOutput.contains("wrote \(file)"), "\(downloaded.standardError)")
        #expect(try WebMReader(path: file).readAll().count >= 2)
        #expect(!FileManager.default.fileExists(atPath: file + ".part"))
        let deleted = try await admin(relay, ["archive", "delete", archive])
        #expect(deleted.status == 0, "\(deleted.standardError)")
        #expect(try await items(admin(relay, ["archive", "list", "--json"])).isEmpty)
        let gone = try await admin(relay, ["archive", "download", archive, "--output", relay.home + "/gone.webm"])
        #expect(gone.status == 1 && gone.standardError.contains("there is no archive \(archive)"), "\(gone.standardError)")
    }

    @Test func mistakesGetSentences() async throws {
        let relay = try await RunningRelayProcess()
        let wrongSecret = try await admin(relay, ["sessions"], secret: "another-secret-of-at-least-32-bytes-long")
        #expect(wrongSecret.status == 1 && wrongSecret.standardError.contains("the relay refused the secret"), "\(wrongSecret.standardError)")
        let noSecret = try await admin(relay, ["sessions"], secret: nil)
        #expect(noSecret.status == 1 && noSecret.standardError.contains("no relay secret is set"), "\(noSecret.standardError)")
        let nowhere = try await ChildProcess.run(
            screenrelay, ["sessions", "--server", "http://127.0.0.1:1"], environment: environment(relay.home), timeout: 30)
        #expect(nowhere.status == 1 && nowhere.standardError.contains("cannot reach the relay at http://127.0.0.1:1"), "\(nowhere.standardError)")
        #expect(nowhere.standardError.contains("connection refused") && !nowhere.standardError.contains("NIO"), "\(nowhere.standardError)")
        let badRole = try await admin(relay, ["token", "x", "--role", "owner"])
        #expect(badRole.status == 64 && badRole.standardError.contains("'publisher', 'subscriber' or 'moderator'"), "\(badRole.standardError)")
        let badLifetime = try await admin(relay, ["token", "x", "--expires", "soon"])
        #expect(badLifetime.status == 64 && badLifetime.standardError.contains("--expires takes"), "\(badLifetime.standardError)")
        let noSession = try await admin(relay, ["token", "nosuch"])
        #expect(noSession.status == 1 && noSession.standardError.contains("there is no session nosuch"), "\(noSession.standardError)")

        // The HTTP API says the same in words, not decoding errors.
        let created = try await admin(relay, ["session", "create", "--json"])
        let session = try #require(try json(created)["sessionId"] as? String)
        let response = try await RelayHTTPClient().send(
            "POST", "http://127.0.0.1:\(relay.port)/session/\(session)/token", bearer: RunningRelayProcess.secret,
            json: Data(#"{"role":"viewer"}"#.utf8))
        let answer = String(decoding: response.body, as: UTF8.self)
        #expect(response.status == 400 && answer.contains("role must be publisher, subscriber or moderator"), "\(answer)")
    }

    @Test func aRelayOnEveryAddressNeverLinksToTheWildcard() async throws {
        let relay = try await RunningRelayProcess(["--host", "0.0.0.0"])
        #expect(relay.process.errorsSoFar.contains("if others reach it by another name or through a proxy, give --public-url")
            || relay.process.errorsSoFar.contains("give --public-url with the address others use"), "\(relay.process.errorsSoFar)")
        let created = try await admin(relay, ["session", "create", "--json"])
        let session = try #require(try json(created)["sessionId"] as? String)
        // Reached by name: links use that name. Asked with the wildcard as its Host, which is none of its names:
        // refused (421), so no link to it is ever made.
        let minted = try await admin(relay, ["token", session, "--json"])
        #expect((try json(minted)["viewerURL"] as? String)?.hasPrefix("http://127.0.0.1:\(relay.port)/view/") == true, "\(minted.standardOutput)")
        let socket = try RawSocket(port: relay.port)
        let body = #"{"role":"subscriber"}"#
        #expect(await socket.send(
            "POST /session/\(session)/token HTTP/1.1\r\nHost: 0.0.0.0:\(relay.port)\r\nAuthorization: Bearer \(RunningRelayProcess.secret)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"))
        var answer = ""
        for _ in 0..<50 where !answer.contains("viewerURL") && !answer.contains("421") {
            answer += String(decoding: await socket.receive(), as: UTF8.self)
        }
        #expect(answer.hasPrefix("HTTP/1.1 421") && !answer.contains("viewerURL"), "\(answer)")
    }

    @Test func onTheRelaysMachineTheCommandsFindItThroughItsConfiguration() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("relay-admin-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let port = try freeLoopbackPort()
        try FileManager.default.createDirectory(atPath: home + "/config/screenrelay", withIntermediateDirectories: true)
        try "port = \(port)\n".write(toFile: home + "/config/screenrelay/config.toml", atomically: true, encoding: .utf8)
        try RunningRelayProcess.secret.write(toFile: home + "/config/screenrelay/secret", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_STATE_HOME"] = home + "/state"
        let relay = try ChildProcess(screenrelay, [], environment: environment)
        defer { relay.endInBackground(signal: SIGKILL) }
        #expect(try await eventually(20) { relay.errorsSoFar.contains("listening on port \(port)") }, "\(relay.errorsSoFar)")
        let created = try await ChildProcess.run(screenrelay, ["session", "create", "--title", "Ünïcode ✓"], environment: environment)
        #expect(created.status == 0, "\(created.standardError)")
        let sessions = try await ChildProcess.run(screenrelay, ["sessions"], environment: environment)
        #expect(sessions.status == 0 && sessions.standardOutput.contains("Ünïcode ✓"), "\(sessions.standardOutput) \(sessions.standardError)")
        // A broken configuration is said, not replaced by other defaults.
        try "port = \"eighty\"\n".write(toFile: home + "/config/screenrelay/config.toml", atomically: true, encoding: .utf8)
        let broken = try await ChildProcess.run(screenrelay, ["sessions"], environment: environment)
        #expect(broken.status == 1 && broken.standardError.contains("the relay's settings cannot be read"), "\(broken.standardError)")
        #expect(broken.standardError.contains("config.toml"), "the message names the file: \(broken.standardError)")
    }
}
