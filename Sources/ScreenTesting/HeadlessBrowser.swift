import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import ScreenMedia

/// A real headless Chromium (Debian's `chromium`) opened at a URL, driven over the DevTools protocol:
/// tests evaluate JavaScript in the page to read what it shows (``BrowserPage``).
public final class HeadlessBrowser: BrowserPage {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let process: ChildProcess
    private let profileDirectory: String
    /// The page's DevTools WebSocket.
    private let pageSocketURL: String

    /// The Chromium executable: `$CHROMIUM` or the first of the usual names on the PATH.
    public static var executable: String? { ProgramLookup.find(["chromium", "chromium-browser", "google-chrome"], overriddenBy: "CHROMIUM") }

    /// Starts Chromium on `url` with extra command-line `arguments` and waits (up to `timeout` s) for its
    /// DevTools endpoint.
    public init(url: String, arguments: [String] = [], timeout: Double = 30) async throws {
        guard let executable = Self.executable else {
            throw Failure(description: "no Chromium found: install Debian's chromium package (scripts/install-deps.sh does)")
        }
        profileDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: profileDirectory, withIntermediateDirectories: true)
        process = try ChildProcess(executable, [
            // No sandbox: tests run as root in containers, where Chromium's sandbox cannot start.
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
            // The WebSocket client sends Origin ws://127.0.0.1, which DevTools refuses unless allowed.
            "--remote-debugging-port=0", "--remote-allow-origins=ws://127.0.0.1", "--user-data-dir=\(profileDirectory)", "--window-size=1280,800",
            // Why a fetch failed, for a failure message (``networkFailures()``).
            "--log-net-log=\(profileDirectory)/net-log.json", "--net-log-capture-mode=Default",
        ] + arguments + [url])
        // Chromium writes the port it picked and its browser endpoint to DevToolsActivePort in the profile.
        let deadline = Date().addingTimeInterval(timeout)
        let endpoint: (port: String, path: String)
        while true {
            if let contents = try? String(contentsOfFile: "\(profileDirectory)/DevToolsActivePort", encoding: .utf8) {
                let lines = contents.split(separator: "\n").map(String.init)
                if lines.count >= 2 {
                    endpoint = (lines[0], lines[1])
                    break
                }
            }
            if Date() > deadline {
                let outcome = await process.wait(timeout: 1)
                try? FileManager.default.removeItem(atPath: profileDirectory)
                throw Failure(description: "Chromium did not open DevTools within \(timeout) s: \(outcome.standardError.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let base = "ws://127.0.0.1:\(endpoint.port)"
        // (DevTools' HTTP endpoints send headers FoundationNetworking rejects, so the page is found over the
        // browser's WebSocket.)
        var page: String?
        while page == nil, Date() < deadline {
            let targets = try await Self.call(base + endpoint.path, method: "Target.getTargets")["targetInfos"] as? [[String: Any]] ?? []
            page = targets.first { $0["type"] as? String == "page" }?["targetId"] as? String
            if page == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let page else { throw Failure(description: "Chromium has no page target") }
        pageSocketURL = "\(base)/devtools/page/\(page)"
    }

    /// One DevTools call on a fresh connection to `url`; returns its result object.
    /// Seconds one DevTools call may take.
    static let callTimeout: Double = 30

    private static func call(_ url: String, method: String, parameters: [String: Any] = [:]) async throws -> [String: Any] {
        let request: [String: Any] = ["id": 1, "method": method, "params": parameters]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        return try await BrowserProtocolCall.result(of: method, protocolName: "DevTools", timeout: callTimeout) { reply in
            // A Chromium busy with the page may let a connection wait in its listen queue past the client's
            // connect timeout: connecting is tried again (the call itself is sent once).
            let connected = Locked(false)
            while true {
                do {
                    try await WebSocketClient.connect(
                        url: url, configuration: .init(maxFrameSize: 16 << 20), logger: Logger(label: "devtools")
                    ) { inbound, outbound, _ in
                        connected.withLock { $0 = true }
                        try await outbound.write(WebSocketOutboundWriter.OutboundFrame.text(text))
                        for try await message in inbound.messages(maxSize: 16 << 20) {
                            if case .text(let answer) = message, answer.contains("\"id\":1") {
                                reply.withLock { $0 = answer }
                                break
                            }
                        }
                        try? await outbound.close(.normalClosure, reason: nil)
                    }
                    return
                } catch where !connected.value && !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
        }
    }

    deinit { close() }

    /// Ends Chromium and removes its profile.
    public func close() {
        let profile = profileDirectory
        process.endInBackground(timeout: 5) { try? FileManager.default.removeItem(atPath: profile) }
    }

    /// The requests that failed so far, each with Chromium's net error (from its net log).
    public func networkFailures() -> [FailedFetch] {
        ChromiumNetLog(path: "\(profileDirectory)/net-log.json")?.failedRequests ?? []
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its value as JSON text.
    public func evaluateJSON(_ expression: String) async throws -> String {
        let result = try await Self.call(
            pageSocketURL, method: "Runtime.evaluate",
            parameters: ["expression": "JSON.stringify(\(expression))", "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] as? [String: Any] {
            throw Failure(description: "\(expression) threw: \(exception)")
        }
        return (result["result"] as? [String: Any])?["value"] as? String ?? "null"
    }
}
