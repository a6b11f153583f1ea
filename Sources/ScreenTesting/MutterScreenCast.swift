import Foundation
import ScreenMedia

/// One screen cast of a ``HeadlessMutter`` (`Tests/Fixtures/mutter-screencast.py`): its PipeWire node, and the
/// virtual pointer and keyboard of the remote-desktop session it belongs to. It ends when released.
public final class MutterScreenCast: Sendable {
    private let helper: FixtureCommands
    private let node = Locked<UInt32?>(nil)

    /// The PipeWire node id of the cast.
    public var nodeID: UInt32 { node.withLock { $0 } ?? 0 }

    init(environment: [String: String], cursorMode: HeadlessMutter.CursorMode, directory: String) throws {
        helper = try FixtureCommands(
            "/usr/bin/python3", [TestFixtures.directory + "/mutter-screencast.py", String(cursorMode.rawValue)],
            environment: environment, directory: directory)
    }

    func waitForNode() async throws {
        let process = helper.process
        let found = try await eventually(20) {
            guard let line = process.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix("node ") }) else {
                return process.hasExited
            }
            self.node.withLock { $0 = UInt32(line.dropFirst(5)) }
            return true
        }
        guard found, node.withLock({ $0 }) != nil else {
            throw HeadlessDesktopFailure(description: "mutter made no screen cast: \(process.errorsSoFar.suffix(800))")
        }
    }

    /// Moves the virtual pointer to (x, y) on the monitor.
    public func movePointer(x: Double, y: Double) async throws { try await helper.send("move \(x) \(y)") }
    /// A left click where the pointer is.
    public func click() async throws { try await helper.send("click") }
    /// Presses and releases the key with X keysym `keysym` (0xFF0D Return, 0xFF09 Tab, 0x0020 space).
    public func press(keysym: UInt32) async throws { try await helper.send("key \(keysym)") }

    /// Answers GNOME's "Screen Share" dialog with this cast's virtual pointer — the monitor's row, then Share,
    /// where the dialog draws them on a 1280×720 monitor — again every second until `granted` says so (or the
    /// sharing program gave up), for at most `seconds`; whether it was granted.
    public func answerScreenShareDialog(seconds: Double = 40, until granted: () -> Bool) async throws -> Bool {
        try await eventually(seconds) {
            guard !granted() else { return true }
            try? await movePointer(x: 640, y: 386)
            try? await click()
            try? await movePointer(x: 852, y: 233)
            try? await click()
            try? await Task.sleep(for: .seconds(1))
            return false
        }
    }
}
