import Foundation
import ScreenTesting
import ScreenTransportClient
import ScreenWire
import Testing

/// A `screenpub` sharing to its embedded relay (on a free port), with its own runtime directory (for the
/// control socket) and configuration directory, so that nothing of the machine's user leaks in.
final class RunningShare {
    static let screenpub = ChildProcess.productsDirectory + "/screenpub"
    static let screensub = ChildProcess.productsDirectory + "/screensub"

    let process: ChildProcess
    let home: String
    /// `http://127.0.0.1:PORT` of the embedded relay.
    let server: String
    /// The viewer link as printed.
    let viewerURL: String
    let viewerToken: String
    let sessionId: String
    var controlSocket: String { home + "/runtime/screenpub.sock" }
    var configFile: String { home + "/config/screenpub/config.toml" }

    /// Starts screenpub with `arguments` after writing `config` (TOML) into its configuration file.
    init(_ arguments: [String], config: String? = nil, environment extra: [String: String] = [:], port: Int = 0) async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("share-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: home + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: home + "/config/screenpub", withIntermediateDirectories: true)
        if let config { try config.write(toFile: home + "/config/screenpub/config.toml", atomically: true, encoding: .utf8) }
        process = try ChildProcess(Self.screenpub, ["--port", String(port)] + arguments, environment: Self.environment(home: home, extra))
        var relayURL = "", token = "", session = "", viewer = ""
        for _ in 0..<200 where token.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            for line in process.outputSoFar.split(separator: "\n") {
                if line.hasPrefix("relay:") { relayURL = String(line.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("session:") { session = String(line.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("viewer:"), let value = line.split(separator: "token=").last {
                    token = String(value)
                    viewer = line.dropFirst(7).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        #expect(relayURL.hasPrefix("ws://127.0.0.1:") || relayURL.hasPrefix("wss://"), "screenpub said: \(process.errorsSoFar)")
        server = relayURL.replacingOccurrences(of: "wss://", with: "https://").replacingOccurrences(of: "ws://", with: "http://")
            .replacingOccurrences(of: "/ws", with: "")
        viewerURL = viewer
        viewerToken = token
        sessionId = session
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: home)
    }

    /// The environment screenpub and its control commands run with.
    static func environment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["XDG_RUNTIME_DIR"] = home + "/runtime"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_STATE_HOME"] = home + "/state"
        return environment.merging(extra) { $1 }
    }

    /// Runs `screenpub COMMAND…` against this share (through the default socket of its runtime directory).
    func control(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(Self.screenpub, arguments, environment: Self.environment(home: home), timeout: 30)
    }

    /// `screenpub status --json`, decoded.
    func status() async throws -> [String: Any] {
        let result = try await control(["status", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        return (try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
    }

    /// `screensub` watching this share, printing every frame and stream change as JSON lines.
    func subscribe() throws -> ChildProcess {
        try ChildProcess(Self.screensub, ["--server", server, "--token", viewerToken, "--print-metadata", "--json"])
    }
}

/// The JSON lines a `screensub --json` has printed so far.
func jsonLines(_ process: ChildProcess) -> [[String: Any]] {
    process.outputSoFar.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// A `screenrelay` process on a free loopback port with its own data directory, for tests that watch it
/// from outside: its memory, its descriptors, its answers to real clients.
final class RunningRelayProcess {
    static let screenrelay = ChildProcess.productsDirectory + "/screenrelay"
    static let secret = "cli-test-relay-secret-that-is-32-bytes-or-more"

    let process: ChildProcess
    let home: String
    let port: Int

    init(_ arguments: [String] = [], environment extra: [String: String] = [:]) async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("relay-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = Self.secret
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_STATE_HOME"] = home + "/state"
        process = try ChildProcess(Self.screenrelay, ["--port", "0"] + arguments, environment: environment.merging(extra) { $1 })
        var found: Int?
        for _ in 0..<400 where found == nil {
            try await Task.sleep(for: .milliseconds(50))
            if let range = process.errorsSoFar.range(of: #"listening on port (\d+)"#, options: .regularExpression) {
                found = Int(process.errorsSoFar[range].split(separator: " ").last ?? "")
            }
        }
        guard let found else { throw Failure(description: "screenrelay did not start: \(process.errorsSoFar)") }
        port = found
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: home)
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// A screenpub sharing `display` to this relay at 5 fps (it makes the session with the secret; `extra`
    /// options added) and the session it made; the caller ends it.
    func share(_ display: VirtualDisplay, _ extra: [String] = []) async throws -> (process: ChildProcess, session: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENRELAY_SECRET"] = Self.secret
        let share = try ChildProcess(
            RunningShare.screenpub,
            ["--display", display.name, "--server", "http://127.0.0.1:\(port)", "--fps", "5", "--duration", "90", "--control-socket", ""] + extra,
            environment: environment)
        for _ in 0..<400 {
            if let session = share.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix("session:") }) {
                return (share, session.dropFirst(8).trimmingCharacters(in: .whitespaces))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        share.endInBackground(signal: SIGKILL)
        throw Failure(description: "screenpub made no session: \(share.errorsSoFar)")
    }

    /// A subscriber token for `session`, minted with `screenrelay token`.
    func subscriberToken(session: String) async throws -> String {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = Self.secret
        environment["XDG_CONFIG_HOME"] = home + "/admin-config"
        let minted = try await ChildProcess.run(
            Self.screenrelay, ["token", session, "--json", "--server", "http://127.0.0.1:\(port)"], environment: environment, timeout: 30)
        guard let token = (try? JSONSerialization.jsonObject(with: Data(minted.standardOutput.utf8)) as? [String: Any])?["token"] as? String else {
            throw Failure(description: "screenrelay token gave no token: \(minted.standardError)")
        }
        return token
    }

    /// Resident memory in kilobytes (VmRSS).
    var residentKilobytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processID)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Descriptors it has open.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processID)/fd").count) ?? 0
    }
}

/// A real nginx (Debian's package) configured by a recipe users copy (packaging/examples/nginx-*.conf) with
/// only what is machine-specific replaced (its port, names, certificate, upstream or directory).
final class RunningNginx {
    static let executable = "/usr/sbin/nginx"
    let process: ChildProcess
    let directory: String
    let port: Int

    /// nginx-screenrelay.conf: TLS in front of a relay.
    convenience init(recipe: String, relayPort: Int, names: [String], certificate: String, key: String) async throws {
        try await self.init(recipe: recipe) { port in [
            ("    listen 443 ssl;", "    listen 127.0.0.1:\(port) ssl;"),
            ("    listen [::]:443 ssl;\n", ""),
            ("server_name screen.example.org;", "server_name \(names.joined(separator: " "));"),
            ("/etc/letsencrypt/live/screen.example.org/fullchain.pem", certificate),
            ("/etc/letsencrypt/live/screen.example.org/privkey.pem", key),
            ("127.0.0.1:8090", "127.0.0.1:\(relayPort)"),
        ] }
    }

    /// Any recipe, with `replacements(port)` applied; each must be found (a recipe that changed fails the test).
    init(recipe: String, replacements: (Int) -> [(String, String)]) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/logs", withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        var server = try String(contentsOfFile: recipe, encoding: .utf8)
        for (from, to) in replacements(port) {
            guard server.contains(from) else { throw RunningRelayProcess.Failure(description: "\(recipe) no longer has \(from)") }
            server = server.replacingOccurrences(of: from, with: to)
        }
        try server.write(toFile: directory + "/screenrelay.conf", atomically: true, encoding: .utf8)
        // One process in the foreground (no master, no user switch), everything in the test's directory.
        try """
            daemon off;
            master_process off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/logs/error.log warn;
            events { worker_connections 512; }
            http {
                access_log off;
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                include \(directory)/screenrelay.conf;
            }

            """.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process = try ChildProcess(Self.executable, ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/logs/error.log"])
        for _ in 0..<200 {
            if (try? RawSocket(port: port, timeout: 1)) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        let log = (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? ""
        throw RunningRelayProcess.Failure(description: "nginx did not start: \(process.errorsSoFar) \(log)")
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A real Caddy (Debian's package) in front of a relay, configured by packaging/examples/Caddyfile with only
/// its address, certificate and upstream changed (and no admin endpoint, no port 80, storage in the test's
/// directory).
final class RunningCaddy {
    static let executable = "/usr/bin/caddy"
    let process: ChildProcess
    let directory: String
    let port: Int

    init(recipe: String, relayPort: Int, certificate: String, key: String) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("caddy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        let site = try String(contentsOfFile: recipe, encoding: .utf8)
            .replacingOccurrences(of: "screen.example.org {", with: "https://localhost:\(port) {\n\ttls \(certificate) \(key)")
            .replacingOccurrences(of: "127.0.0.1:8090", with: "127.0.0.1:\(relayPort)")
        try """
            {
            \tadmin off
            \tauto_https disable_redirects
            \tstorage file_system \(directory)/storage
            }

            \(site)
            """.write(toFile: directory + "/Caddyfile", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        (environment["HOME"], environment["XDG_DATA_HOME"], environment["XDG_CONFIG_HOME"]) = (directory, directory, directory)
        process = try ChildProcess(
            Self.executable, ["run", "--config", directory + "/Caddyfile", "--adapter", "caddyfile"], environment: environment)
        for _ in 0..<200 {
            if (try? RawSocket(port: port, timeout: 1)) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RunningRelayProcess.Failure(description: "caddy did not start: \(process.errorsSoFar.suffix(2000))")
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension RunningRelayProcess {
    /// A session made over its HTTP API with the secret, and a subscriber token minted for it.
    func makeSession() async throws -> (credentials: SessionCredentials, viewerToken: String) {
        let http = RelayHTTPClient()
        let made = try await http.send("POST", "http://127.0.0.1:\(port)/session", bearer: Self.secret)
        let credentials = try JSONDecoder().decode(SessionCredentials.self, from: made.body)
        let minted = try await http.send(
            "POST", "http://127.0.0.1:\(port)/session/\(credentials.sessionId)/token", bearer: Self.secret,
            json: Data(#"{"role":"subscriber"}"#.utf8))
        return (credentials, try JSONDecoder().decode([String: String].self, from: minted.body)["token"] ?? "")
    }
}
