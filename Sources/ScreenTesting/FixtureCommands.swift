import Foundation
import ScreenMedia

/// A fixture program driven by lines on its standard input (a FIFO), each answered by a line of its standard
/// output, "ok" or "error: …" (`mutter-screencast.py`, `wayland-virtual-pointer.c`).
final class FixtureCommands: Sendable {
    let process: ChildProcess
    /// The writing end of the program's standard input: commands go in, closing it ends the program.
    private let commands: Int32
    private let answered = Locked(0)

    init(_ program: String, _ arguments: [String], environment: [String: String], directory: String) throws {
        let fifo = directory + "/commands-\(UUID().uuidString.prefix(8))"
        guard mkfifo(fifo, 0o600) == 0 else { throw HeadlessDesktopFailure(description: "mkfifo \(fifo): errno \(errno)") }
        // Opened for reading and writing here first, so the program's open (for reading) does not wait for a writer.
        commands = open(fifo, O_RDWR | O_CLOEXEC)
        guard commands >= 0 else { throw HeadlessDesktopFailure(description: "open \(fifo): errno \(errno)") }
        do {
            process = try ChildProcess(program, arguments, environment: environment, standardInput: fifo)
        } catch {
            close(commands)
            throw error
        }
    }

    /// Sends one command and waits (up to 10 s) for its answer.
    func send(_ command: String) async throws {
        let expected = answered.withLock { count in
            count += 1
            return count
        }
        let line = Array((command + "\n").utf8)
        guard line.withUnsafeBytes({ write(commands, $0.baseAddress, $0.count) }) == line.count else {
            throw HeadlessDesktopFailure(description: "the fixture is gone: \(process.errorsSoFar.suffix(400))")
        }
        let answers = { self.process.outputSoFar.split(separator: "\n").filter { $0 == "ok" || $0.hasPrefix("error:") } }
        guard try await eventually(10, { answers().count >= expected || self.process.hasExited }), answers().count >= expected else {
            throw HeadlessDesktopFailure(description: "no answer to \"\(command)\": \(process.errorsSoFar.suffix(400))")
        }
        let answer = answers()[expected - 1]
        if answer.hasPrefix("error:") { throw HeadlessDesktopFailure(description: "\(command): \(answer)") }
    }

    deinit {
        close(commands)
        process.endInBackground(signal: SIGTERM)
    }
}

/// A pointer moved on a headless wlroots compositor (`Tests/Fixtures/wayland-virtual-pointer.c`).
public final class WaylandVirtualPointer: Sendable {
    private let commands: FixtureCommands
    var process: ChildProcess { commands.process }

    init(program: String, width: Int, height: Int, environment: [String: String], directory: String) async throws {
        commands = try FixtureCommands(program, [String(width), String(height)], environment: environment, directory: directory)
        let process = commands.process
        guard try await eventually(10, { process.outputSoFar.contains("ready") || process.hasExited }), !process.hasExited else {
            throw HeadlessDesktopFailure(description: "the virtual pointer did not start: \(process.errorsSoFar.suffix(400))")
        }
    }

    /// Moves the pointer to (x, y) on the output; returns once the compositor has the motion.
    public func move(x: Int, y: Int) async throws { try await commands.send("move \(x) \(y)") }
}
