import CTestingShims
import Foundation
import ScreenMedia
import Glibc

/// A program run by a test: spawned with posix_spawn, output captured to files, reaped with waitpid.
public final class ChildProcess: Sendable {
    public struct Outcome: Sendable {
        /// The exit code, or 128 + the signal number when killed by a signal.
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    public let processID: Int32
    private let outputPath: String
    private let errorPath: String
    private let outcome = Locked<Outcome?>(nil)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `path` with `arguments`; `environment` replaces the inherited one when given; standard input is
    /// the file at `standardInput` (default /dev/null). `passing`, when given, is the program's descriptor 3
    /// (as a launcher hands over a socket); no other descriptor of the test process reaches it.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, standardInput: String = "/dev/null",
        passing descriptor: Int32? = nil
    ) throws {
        let directory = FileManager.default.temporaryDirectory.path
        let stamp = UUID().uuidString
        outputPath = "\(directory)/child-\(stamp).out"
        errorPath = "\(directory)/child-\(stamp).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else of the test process: a daemon that outlives its test must not keep another test's socket,
        // or the pipes `swift test` reads the run's output from, open.
        if let descriptor { posix_spawn_file_actions_adddup2(&actions, descriptor, 3) }
        CTestingShims_addCloseFrom(&actions, descriptor == nil ? 3 : 4)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environmentStrings.forEach { free($0) } }
        // The child starts with no blocked and no ignored signals, whatever the test process has set up for
        // itself: otherwise SIGTERM may be blocked in the child too, and it would not stop when told.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // Its own process group: a program that signals its whole group when it ends (some do, to take their
        // helpers down) must not take the test runner with it, which would vanish without a summary.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environmentStrings)
        guard status == 0 else { throw Failure(description: "cannot start \(path): errno \(status)") }
        processID = pid
    }

    public func signal(_ number: Int32) { kill(processID, number) }

    /// What the program has written to standard output so far.
    public var outputSoFar: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// What the program has written to standard error so far.
    public var errorsSoFar: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Whether the program has ended (without collecting it: ``wait(timeout:)`` still returns its outcome).
    public var hasExited: Bool {
        if outcome.withLock({ $0 }) != nil { return true }
        var info = siginfo_t()
        return waitid(P_PID, id_t(processID), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid != 0
    }

    /// Waits for the program to end (killing it after `timeout` seconds) and returns its status and output.
    /// Waits with `Task.sleep`: a test waiting for its child never holds one of the few threads of the
    /// concurrency pool, which the relays and shares of tests running beside it need.
    @discardableResult
    public func wait(timeout: Double = 60) async -> Outcome {
        let deadline = Date().addingTimeInterval(timeout)
        while !hasExited, Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return waitSynchronously(timeout: 0)
    }

    /// ``wait(timeout:)`` blocking the calling thread: only where awaiting is impossible (a `defer`).
    @discardableResult
    public func waitSynchronously(timeout: Double = 60) -> Outcome {
        if let done = outcome.withLock({ $0 }) { return done }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(processID, &status, WNOHANG) == 0 {
            if Date() >= deadline {
                kill(processID, SIGKILL)
                waitpid(processID, &status, 0)
                break
            }
            usleep(10_000)
        }
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let result = Outcome(
            status: code,
            standardOutput: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
        outcome.withLock { $0 = result }
        return result
    }

    /// Every child ends with whoever started it: one still unreaped when the last reference to it goes (a test
    /// that ended, or failed, without stopping it) is killed with its process group and reaped on a thread of its
    /// own, so that no relay or share of a test outlives the run.
    deinit {
        guard outcome.withLock({ $0 == nil }) else { return }
        let (processID, files) = (processID, [outputPath, errorPath])
        kill(-processID, SIGKILL)
        kill(processID, SIGKILL)
        Thread {
            var status: Int32 = 0
            waitpid(processID, &status, 0)
            for file in files { try? FileManager.default.removeItem(atPath: file) }
        }.start()
    }

    /// Sends `signal` and lets a thread of its own reap the program (killing it after `timeout` seconds), so
    /// that a `defer` or `deinit` on a concurrency-pool thread never waits for a program to exit.
    public func endInBackground(signal number: Int32? = nil, timeout: Double = 10, then cleanUp: @escaping @Sendable () -> Void = {}) {
        signal(number ?? SIGTERM)
        Thread { [self] in
            waitSynchronously(timeout: timeout)
            cleanUp()
        }.start()
    }

    /// Runs a program to completion.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 60) async throws -> Outcome {
        try await ChildProcess(path, arguments, environment: environment).wait(timeout: timeout)
    }

    /// The directory holding the package's built executables (beside the running test bundle), or
    /// `$SCREENPUB_BIN_DIR` when set.
    public static var productsDirectory: String {
        if let configured = ProcessInfo.processInfo.environment["SCREENPUB_BIN_DIR"] { return configured }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On some layouts the test binary sits inside a .xctest bundle directory.
        if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.path
    }
}
