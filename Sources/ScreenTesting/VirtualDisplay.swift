import CTestingShims
import Foundation
import ScreenMedia
import ScreenPipeline
import Glibc

/// A private Xvfb server for tests and demos, stopped on `stop()` or deinit.
///
/// Display numbers are handed out by this process in increasing order, from a start that depends on the
/// process id, so a number is never used twice in one run: a test that stops its display and brings it back on
/// the same number (a vanished X server) cannot find it taken by another test's new display. A number some
/// other program holds is skipped.
///
/// Spawned with posix_spawn and reaped with waitpid rather than Foundation's `Process`, whose
/// `waitUntilExit()` spins a run loop and can block a concurrency thread indefinitely on Linux. Starting (until
/// the server accepts connections) and reaping happen on threads of their own: the concurrency pool has as many
/// threads as the machine has cores, and a wait there holds back the relays and shares of every other test.
public final class VirtualDisplay: Sendable {
    public let name: String
    public let width: Int
    public let height: Int
    public let processID: Int32
    private let stopped = Locked(false)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private static let nextNumber = Locked(100 + Int(getpid() % 500) * 20)

    /// Starts Xvfb on the next display number of this process, or on `displayNumber` (to bring a display back
    /// after `stop()`). A number in use (by a server of another program) is skipped; on a given number a failed
    /// start is tried again (three attempts).
    public init(width: Int = 1280, height: Int = 720, displayNumber: Int? = nil) async throws {
        self.width = width
        self.height = height
        (processID, name) = try await runOnDedicatedThread(name: "xvfb-start") {
            var attempt = 0
            while true {
                attempt += 1
                let number = displayNumber ?? Self.nextNumber.withLock { next in
                    defer { next += 1 }
                    return next
                }
                do {
                    return try Self.spawn(width: width, height: height, displayNumber: number)
                } catch where attempt < (displayNumber == nil ? 20 : 3) {
                    if displayNumber != nil { usleep(UInt32.random(in: 50_000...250_000)) }
                }
            }
        }
    }

    private static func spawn(width: Int, height: Int, displayNumber: Int) throws -> (pid_t, String) {
        guard let xvfb = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first(where: { (path: String) in access(path, X_OK) == 0 }) else {
            throw Failure(description: "Xvfb is not installed (apt-get install xvfb)")
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(readEnd) }
        // The pipe's write end is the server's descriptor 3, and it is all it gets of the test process (as in ChildProcess).
        let arguments = [xvfb, ":\(displayNumber)", "-displayfd", "3", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("xvfb-\(UUID().uuidString).err").path
        defer { unlink(errors) }
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 3)
        CTestingShims_addCloseFrom(&actions, 4)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // In a process group of its own, as ChildProcess does.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let status = posix_spawn(&pid, xvfb, &actions, &attributes, argv, environ)
        close(writeEnd)
        guard status == 0 else { throw Failure(description: "cannot start Xvfb: errno \(status)") }

        // Xvfb writes its display number and a newline once it accepts connections.
        var number = ""
        var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        while poll(&poller, 1, 10_000) > 0, read(readEnd, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            number.append(Character(UnicodeScalar(byte)))
        }
        guard !number.isEmpty, Int(number) != nil else {
            kill(pid, SIGKILL)
            var exitStatus: Int32 = 0
            waitpid(pid, &exitStatus, 0)
            let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw Failure(description: "Xvfb did not start: \(said.suffix(600))")
        }
        return (pid, ":\(number)")
    }

    /// Stops the server (as if it crashed, for tests of a vanished display); it is reaped on a thread of its own
    /// (a killed server still takes a while to exit on a loaded machine). ``stopAndWait()`` waits for that.
    public func stop() {
        let alreadyStopped = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !alreadyStopped else { return }
        kill(processID, SIGKILL)
        let (processID, name, reaped) = (processID, name, reaped)
        Thread.detachNewThread {
            Self.reap(processID, name: name)
            reaped.withLock { $0 = true }
        }
    }

    /// ``stop()``, returning once the server has exited and its display number is free again.
    public func stopAndWait() async {
        stop()
        while !reaped.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
    }

    private let reaped = Locked(false)

    private static func reap(_ processID: pid_t, name: String) {
        var exitStatus: Int32 = 0
        waitpid(processID, &exitStatus, 0)
        // A killed Xvfb leaves its lock and socket; other Xvfbs looking for a free number would trip on them.
        // Removed only while the lock is still this server's: another Xvfb may already have taken the number
        // over (Xvfb replaces a dead server's lock), and removing its lock would let a third one collide with it.
        let number = name.dropFirst()
        let lock = "/tmp/.X\(number)-lock"
        let owner = (try? String(contentsOfFile: lock, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if owner == String(processID) {
            unlink("/tmp/.X11-unix/X\(number)")
            unlink(lock)
        }
    }

    deinit { stop() }
}
