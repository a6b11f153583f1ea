import Foundation
import HummingbirdWSClient
import Logging
import ScreenMedia

/// A real headless Firefox (Debian's `firefox-esr`) opened at a URL, with a temporary profile of its own,
/// driven over WebDriver BiDi, the protocol Firefox serves itself with `--remote-debugging-port` (Debian has no
/// geckodriver): tests evaluate JavaScript in the page to read what it shows (``BrowserPage``).
public final class HeadlessFirefox: BrowserPage {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let process: ChildProcess
    private let profileDirectory: String
    /// BiDi's endpoint, where each call opens a session of its own.
    private let sessionURL: String

    /// The Firefox executable: `$FIREFOX` or the first of the usual names on the PATH.
    public static var executable: String? { ProgramLookup.find(["firefox-esr", "firefox"], overriddenBy: "FIREFOX") }

    /// What every test profile sets: nothing reaches out to the network on its own (updates, telemetry,
    /// experiments, safe browsing), no first-run page, and media may start without a click, as in Chromium's
    /// headless mode.
    static let quietPreferences: [String: String] = [
        "app.update.disabledForTesting": "true",
        "app.normandy.enabled": "false",
        "browser.shell.checkDefaultBrowser": "false",
        "browser.startup.homepage_override.mstone": "\"ignore\"",
        "browser.aboutwelcome.enabled": "false",
        "browser.safebrowsing.malware.enabled": "false",
        "browser.safebrowsing.phishing.enabled": "false",
        "browser.safebrowsing.downloads.enabled": "false",
        "datareporting.policy.dataSubmissionEnabled": "false",
        "toolkit.telemetry.reportingpolicy.firstRun": "false",
        "messaging-system.rsexperimentloader.enabled": "false",
        "network.captive-portal-service.enabled": "false",
        "network.connectivity-service.enabled": "false",
        "media.autoplay.default": "0",
    ]

    /// Starts Firefox on `url` and waits (up to `timeout` s) for its BiDi endpoint. `preferences` (a name → a
    /// JavaScript literal, written to the profile's `user.js`) change what it does, e.g. `media.av1.enabled`
    /// `false` for a Firefox that decodes no AV1.
    public init(url: String, preferences: [String: String] = [:], timeout: Double = 30) async throws {
        guard let executable = Self.executable else {
            throw Failure(description: "no Firefox found: install Debian's firefox-esr package (scripts/install-deps.sh does)")
        }
        profileDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("firefox-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: profileDirectory, withIntermediateDirectories: true)
        let userJS = Self.quietPreferences.merging(preferences) { $1 }.sorted { $0.key < $1.key }
            .map { "user_pref(\"\($0.key)\", \($0.value));\n" }.joined()
        try userJS.write(toFile: profileDirectory + "/user.js", atomically: true, encoding: .utf8)
        process = try ChildProcess(executable, [
            // The WebSocket client sends Origin ws://127.0.0.1, which BiDi refuses unless allowed.
            "--headless", "--no-remote", "--profile", profileDirectory, "--remote-debugging-port", "0", "--remote-allow-origins", "ws://127.0.0.1",
            "--width", "1280", "--height", "800",
            "about:blank",
        ])
        // Firefox writes the port it picked to WebDriverBiDiServer.json in the profile.
        let deadline = Date().addingTimeInterval(timeout)
        var port: Int?
        while port == nil {
            if let data = FileManager.default.contents(atPath: profileDirectory + "/WebDriverBiDiServer.json"),
                let server = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            {
                port = server["ws_port"] as? Int
            }
            if port == nil {
                if Date() > deadline {
                    let outcome = await process.wait(timeout: 1)
                    try? FileManager.default.removeItem(atPath: profileDirectory)
                    throw Failure(description: "Firefox did not open WebDriver BiDi within \(timeout) s: \(outcome.standardError.suffix(2000))")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        sessionURL = "ws://127.0.0.1:\(port ?? 0)/session"
        // (Not waiting for the load: the page's own state says when it is ready.)
        _ = try await Self.call(sessionURL, method: "browsingContext.navigate") { ["context": $0, "url": url, "wait": "none"] }
    }

    /// Seconds one BiDi call may take.
    static let callTimeout: Double = 30

    /// One BiDi command in a session of its own on a fresh connection to `url`: Firefox keeps a session after its
    /// connection closes and allows one at a time, so each call ends its session; a call that finds another's
    /// still open waits for it. The command's `parameters` are made for the tab, found anew each time (the tab
    /// Firefox starts with is replaced early on). Returns the command's result object.
    private static func call(
        _ url: String, method: String, parameters: @escaping @Sendable (_ tab: String) -> [String: any Sendable]
    ) async throws -> [String: Any] {
        @Sendable func message(_ id: Int, _ method: String, _ parameters: [String: any Sendable]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": parameters]), as: UTF8.self)
        }
        return try await BrowserProtocolCall.result(of: method, protocolName: "WebDriver BiDi", timeout: callTimeout) { reply in
            while true {
                let busy = Locked(false)
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: 16 << 20), logger: Logger(label: "webdriver-bidi")
                ) { inbound, outbound, _ in
                    var answers = inbound.messages(maxSize: 16 << 20).makeAsyncIterator()
                    func exchange(_ id: Int, _ method: String, _ parameters: [String: any Sendable]) async throws -> String {
                        try await outbound.write(WebSocketOutboundWriter.OutboundFrame.text(try message(id, method, parameters)))
                        while let next = try await answers.next() {
                            if case .text(let text) = next, text.contains("\"id\":\(id),") { return text }
                        }
                        throw Failure(description: "WebDriver BiDi closed the connection before answering \(method)")
                    }
                    guard try await !exchange(1, "session.new", ["capabilities": [String: String]()]).contains("\"type\":\"error\"") else {
                        busy.withLock { $0 = true }
                        try? await outbound.close(.normalClosure, reason: nil)
                        return
                    }
                    let tree = try JSONSerialization.jsonObject(with: Data(try await exchange(2, "browsingContext.getTree", ["maxDepth": 0]).utf8))
                    let tabs = ((tree as? [String: Any])?["result"] as? [String: Any])?["contexts"] as? [[String: Any]]
                    // (No tab: no answer, which the call reports.)
                    if let tab = tabs?.first?["context"] as? String {
                        let answer = try await exchange(3, method, parameters(tab))
                        reply.withLock { $0 = answer }
                    }
                    _ = try await exchange(4, "session.end", [:])
                    try? await outbound.close(.normalClosure, reason: nil)
                }
                guard busy.value else { return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    deinit { close() }

    /// Ends Firefox and removes its profile.
    public func close() {
        let profile = profileDirectory
        process.endInBackground(timeout: 5) { try? FileManager.default.removeItem(atPath: profile) }
    }

    /// Evaluates `expression` in the page (a promise is awaited) and returns its value as JSON text.
    public func evaluateJSON(_ expression: String) async throws -> String {
        let result = try await Self.call(sessionURL, method: "script.evaluate") { tab in
            [
                "expression": "(async () => JSON.stringify(await (\(expression))))()", "target": ["context": tab],
                "awaitPromise": true, "resultOwnership": "none",
            ]
        }
        if result["type"] as? String == "exception" {
            throw Failure(description: "\(expression) threw: \((result["exceptionDetails"] as? [String: Any])?["text"] ?? result)")
        }
        let value = result["result"] as? [String: Any]
        return value?["type"] as? String == "string" ? value?["value"] as? String ?? "null" : "null"
    }
}
