import Foundation

/// TEST DOUBLE for a desktop's ScreenCast portal backend, on a ``PrivatePipeWire``'s bus: runs
/// `Tests/Fixtures/screencast-portal-test-backend.py`, which implements `org.freedesktop.impl.portal.ScreenCast`
/// without a dialog and hands out a given PipeWire node. The portal in front of it is the real
/// xdg-desktop-portal, started by the bus on the first call; only the desktop-specific part is replaced, for
/// answers no real desktop gives on demand (a decline, a failure, a grant of more than was asked). The real
/// backends are tested on their own compositors (``HeadlessMutter``, ``HeadlessSway``, ``HeadlessKWin``).
public final class ScreenCastPortalTestBackend: Sendable {
    public enum Answer: String, Sendable {
        /// As a user who clicks "Share".
        case grant
        /// As a user who closes the dialog.
        case cancel
        /// As a backend that fails.
        case fail
        /// Grants when asked afresh, fails when asked with restore data (a saved grant gone stale).
        case failRestored = "fail-restored"
        /// Grants a whole monitor whatever was asked for: more than a user asking for a window meant to show.
        case grantMonitor = "grant-monitor"
    }

    private let process: ChildProcess
    private let logPath: String
    /// Write a node id here (``handOut(node:)``) to have the next grants give that node.
    private let nodeFile: String

    public static let script = TestFixtures.directory + "/screencast-portal-test-backend.py"

    /// Registers the backend (a `.portal` file in the bus's portal directory) and starts it.
    /// `cursorModes`: the AvailableCursorModes it offers (1 hidden, 2 embedded, 4 metadata).
    public init(
        on pipewire: PrivatePipeWire, node: UInt32, size: (width: Int, height: Int)? = nil, answer: Answer = .grant, cursorModes: Int = 3
    ) async throws {
        let portalFile = """
            [portal]
            DBusName=org.freedesktop.impl.portal.desktop.screenpubtest
            Interfaces=org.freedesktop.impl.portal.ScreenCast
            UseIn=\(PrivatePipeWire.portalDesktop)

            """
        try portalFile.write(toFile: pipewire.portalDirectory + "/screenpubtest.portal", atomically: true, encoding: .utf8)
        let stamp = UUID().uuidString.prefix(8)
        logPath = pipewire.runtimeDirectory + "/portal-backend-\(stamp).jsonl"
        nodeFile = pipewire.runtimeDirectory + "/portal-backend-\(stamp).node"
        var arguments = [
            Self.script, "--node", String(node), "--node-file", nodeFile, "--answer", answer.rawValue, "--cursor-modes",
            String(cursorModes), "--log", logPath,
        ]
        if let size { arguments += ["--width", String(size.width), "--height", String(size.height)] }
        process = try ChildProcess("/usr/bin/python3", arguments, environment: pipewire.environment)
        let deadline = Date().addingTimeInterval(10)
        while !calls().contains(where: { $0["method"] as? String == "ready" }) {
            guard Date() < deadline, !process.hasExited else {
                throw PrivatePipeWire.Failure(description: "the test portal backend did not start: \(process.errorsSoFar)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    deinit {
        process.endInBackground(timeout: 5)
    }

    /// Every call the portal made to the backend, in order: `method` (CreateSession, SelectSources, Start,
    /// Session.Close), `session`, `app_id` and `options` (the a{sv} as JSON).
    public func calls() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// From now on, grants give `node` (as a desktop whose screen cast was restarted).
    public func handOut(node: UInt32) throws {
        try String(node).write(toFile: nodeFile, atomically: true, encoding: .utf8)
    }

    /// The options of each SelectSources call.
    public func selectSourcesOptions() -> [[String: Any]] {
        calls().filter { $0["method"] as? String == "SelectSources" }.compactMap { $0["options"] as? [String: Any] }
    }

    /// What the backend wrote on standard error (Python tracebacks).
    public var errors: String { process.errorsSoFar }
}
