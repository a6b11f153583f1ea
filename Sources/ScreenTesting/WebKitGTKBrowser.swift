import Foundation
import ScreenMedia
import ScreenTransportClient

/// A real WebKitGTK browser (the `MiniBrowser` that Debian's libwebkit2gtk-4.1-0 installs) opened at a URL on a
/// private Xvfb of its own (it has no headless mode), driven by `WebKitWebDriver` (Debian's webkit2gtk-driver)
/// over W3C WebDriver: tests evaluate JavaScript in the page to read what it shows (``BrowserPage``).
/// WebKitGTK decodes media, WebCodecs included, through GStreamer: `environment` reaches GStreamer, so that
/// `GST_PLUGIN_FEATURE_RANK` can take decoders away (a browser that decodes H.264 alone, as an iPhone).
public final class WebKitGTKBrowser: BrowserPage {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let display: VirtualDisplay
    private let driver: ChildProcess
    /// The WebDriver session's URL.
    private let sessionURL: String

    /// `WebKitWebDriver`: `$WEBKIT_WEBDRIVER` or the one on the PATH.
    public static var driverExecutable: String? { ProgramLookup.find(["WebKitWebDriver"], overriddenBy: "WEBKIT_WEBDRIVER") }

    /// The `MiniBrowser` the driver starts: `$WEBKIT_MINIBROWSER` or the one in the library's folder.
    public static var browserExecutable: String? {
        if let configured = ProcessInfo.processInfo.environment["WEBKIT_MINIBROWSER"], !configured.isEmpty { return configured }
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []
        return folders.sorted().map { "/usr/lib/\($0)/webkit2gtk-4.1/MiniBrowser" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// WebDriver's answers carry whole canvases' pixels as JSON.
    private static let http: RelayHTTPClient = {
        var client = RelayHTTPClient(peer: "WebKitWebDriver")
        client.maximumBody = 64 << 20
        client.timeoutSeconds = 60
        return client
    }()

    /// Starts the driver and the browser on `url` (waiting up to `timeout` s for the page to load) with
    /// `environment` added to this process's.
    public init(url: String, environment: [String: String] = [:], timeout: Double = 60) async throws {
        guard let driverExecutable = Self.driverExecutable, let browserExecutable = Self.browserExecutable else {
            throw Failure(description: "no WebKitGTK MiniBrowser and WebKitWebDriver found: install Debian's webkit2gtk-driver (scripts/install-deps.sh does)")
        }
        display = try await VirtualDisplay(width: 1280, height: 800)
        var inherited = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        inherited["DISPLAY"] = display.name
        let deadline = Date().addingTimeInterval(timeout)
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "webkitgtk:browserOptions": ["binary": browserExecutable, "args": ["--automation", "--autoplay-policy=allow"]],
        ]]]
        let body = try JSONSerialization.data(withJSONObject: capabilities)
        // The port is found free, then given to the driver: another program may take it between, so a driver
        // that exits at once is started again on another one.
        var started: (ChildProcess, String)?
        var refusals: [String] = []
        while started == nil {
            let port = try freeLoopbackPort()
            let driver = try ChildProcess(driverExecutable, ["--port=\(port)"], environment: inherited)
            while Date() < deadline, !driver.hasExited {
                if let answer = try? await Self.http.send("POST", "http://127.0.0.1:\(port)/session", json: body) {
                    let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
                    if let id = (object?["value"] as? [String: Any])?["sessionId"] as? String {
                        started = (driver, "http://127.0.0.1:\(port)/session/\(id)")
                    } else {
                        refusals.append(String(decoding: answer.body.prefix(500), as: UTF8.self))
                    }
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            if started == nil {
                let errors = driver.errorsSoFar
                driver.endInBackground(signal: SIGKILL, timeout: 5)
                if Date() > deadline || !refusals.isEmpty {
                    display.stop()
                    throw Failure(description: "WebKitWebDriver opened no browser within \(timeout) s: \(refusals) \(errors.suffix(2000))")
                }
            }
        }
        guard let (driver, sessionURL) = started else { throw Failure(description: "unreachable") }
        self.driver = driver
        self.sessionURL = sessionURL
        _ = try await command("POST", "/url", ["url": url])
    }

    /// One WebDriver command on the session: its `value`. A refusal (a script that threw) throws its message.
    private func command(_ method: String, _ path: String, _ parameters: [String: any Sendable]) async throws -> Any? {
        let answer = try await Self.http.send(method, sessionURL + path, json: try JSONSerialization.data(withJSONObject: parameters))
        let value = (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any])?["value"]
        guard answer.status == 200 else {
            let message = (value as? [String: Any])?["message"] ?? String(decoding: answer.body.prefix(500), as: UTF8.self)
            throw Failure(description: "WebKitWebDriver refused \(path) (\(answer.status)): \(message)")
        }
        return value
    }

    deinit { close() }

    /// Ends the display, which ends the browser on it (GTK exits when its X server goes), and the driver.
    /// (At once: a test process that ends right after would leave behind what a background step had not
    /// reached.)
    public func close() {
        display.stop()
        driver.endInBackground(timeout: 5)
    }

    /// Evaluates `expression` in the page (a promise is awaited) and returns its value as JSON text.
    public func evaluateJSON(_ expression: String) async throws -> String {
        let value = try await command("POST", "/execute/sync", [
            "script": "return (async () => JSON.stringify(await (\(expression))))();", "args": [String](),
        ])
        return value as? String ?? "null"
    }
}
