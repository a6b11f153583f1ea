// Only where Swift Testing is (the tests' builds): the benchmarks' tools link ScreenTesting in the release build,
// whose static Swift runtime has no Testing module.
#if canImport(Testing)
import Foundation
public import Testing
import ScreenMedia

/// A suite trait for tests that run real programs, sockets and servers: a test that runs past its limit fails
/// and is cancelled; one that does not end even then (stuck in a wait that ignores cancellation) stops the
/// test process with the names of the tests still running, so a run never hangs without saying where.
/// With `SCREENPUB_TEST_TRACE=FILE`, every test's start and end is appended to FILE as it happens (the
/// console output of `swift test` is relayed and can lag or lose lines when the machine is loaded).
///
/// Watched tests also take turns: at most two per core run at once (`SCREENPUB_TEST_PARALLELISM` sets
/// another number). Swift Testing starts every test at once, and on a small machine dozens of X servers,
/// browsers and relays starting together leave each one too little of the processor to answer in time.
/// A test's limit counts from its turn (Swift Testing's `.timeLimit` would count the wait for a turn too: tests in
/// watched suites rely on this limit instead).
public struct TestWatchdog: SuiteTrait, TestTrait, TestScoping {
    /// How long one test may run.
    public var limit: Duration
    /// How long a cancelled test may take to end before the process is stopped.
    public var grace: Duration
    /// For the run's longest serialized suite: its tests go first from its first, so that its chain begins with
    /// the run rather than after the chains queued before it.
    public var startsFirst = false

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // Suites get a scope too (before their tests); only test functions (each of their cases) are watched.
        guard !test.isSuite else {
            if test.traits.contains(where: { $0 is ParallelizationTrait }) { Self.serializedSuites.withLock { _ = $0.insert("\(test.id)") } }
            return try await function()
        }
        let name = Self.name(of: test, testCase)
        // One turn per test, also when it is watched twice (a watched suite inside another).
        let hadTurn = Self.holdsTurn
        // A serialized suite's tests run one after another: the longest chains of the run. They go ahead of the
        // queue, or each would wait behind every test queued meanwhile and the chains end the run alone; and a
        // chain's next test (its suite has ended one) goes first, so that a chain once begun goes on rather than
        // all of them taking turns and ending late together.
        let suite = String(name.prefix { $0 != "/" })
        if !hadTurn {
            let place: TurnTaking.Place =
                startsFirst || Self.suitesWithAnEnd.withLock { $0.contains(suite) } ? .first
                : Self.serializedSuites.withLock { $0.contains(suite) } ? .ahead : .last
            await Self.turns.enter(place)
        }
        defer {
            if !hadTurn {
                Self.suitesWithAnEnd.withLock { _ = $0.insert(suite) }
                Self.turns.leave()
            }
        }
        let started = ContinuousClock.now
        Self.running.withLock { $0[name, default: 0] += 1 }
        Self.trace("start \(name)")
        defer {
            Self.running.withLock { running in
                running[name, default: 1] -= 1
                if running[name] == 0 { running[name] = nil }
            }
            Self.trace("end \(name) after \(ContinuousClock.now - started)")
        }
        let (limit, grace) = (limit, grace)
        // The group awaits both children before it returns, so `function` does not outlive this call.
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await Self.$holdsTurn.withValue(true) { try await function() }
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return false
                }
                defer { group.cancelAll() }
                guard let finished = try await group.next(), !finished else { return }
                Issue.record("\(name) ran past its limit of \(limit) and was cancelled")
                Self.trace("over the limit: \(name)")
                Self.stopTheProcess(after: grace, unless: name)
            }
        }
    }

    /// The process ends if the test `name` is still running after `grace`.
    private static func stopTheProcess(after grace: Duration, unless name: String) {
        Thread {
            Thread.sleep(forTimeInterval: Double(grace.components.seconds))
            let stuck = running.withLock { $0 }
            guard stuck[name] != nil else { return }
            let message = "\(name) did not end within \(grace) of being cancelled; stopping the test process. "
                + "Tests still running: \(stuck.keys.sorted().joined(separator: ", "))\n"
            trace(message)
            FileHandle.standardError.write(Data(message.utf8))
            exit(70)
        }.start()
    }

    private static let running = Locked<[String: Int]>([:])
    /// Suites (by their identifier) of which a test has ended, and those serialized.
    private static let suitesWithAnEnd = Locked<Set<String>>([])
    private static let serializedSuites = Locked<Set<String>>([])

    @TaskLocal private static var holdsTurn = false

    private static let turns = TurnTaking(width: {
        if let value = ProcessInfo.processInfo.environment["SCREENPUB_TEST_PARALLELISM"], let width = Int(value), width > 0 {
            return width
        }
        return 2 * ProcessInfo.processInfo.activeProcessorCount
    }())

    private static let traceFile: Int32? = {
        guard let path = ProcessInfo.processInfo.environment["SCREENPUB_TEST_TRACE"], !path.isEmpty else { return nil }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        return descriptor >= 0 ? descriptor : nil
    }()

    /// One line, written with one `write` (appends of a line are not interleaved).
    private static func trace(_ line: String) {
        guard let traceFile else { return }
        let stamped = "\(Date().timeIntervalSince1970) \(line)\n"
        _ = stamped.utf8CString.withUnsafeBufferPointer { write(traceFile, $0.baseAddress, $0.count - 1) }
    }

    /// The test's identifier; a parameterized test's cases are numbered in the order they start.
    private static func name(of test: Test, _ testCase: Test.Case?) -> String {
        guard let testCase, testCase.isParameterized else { return "\(test.id)" }
        let number = caseNumbers.withLock { numbers in
            let number = numbers["\(test.id)", default: 0] + 1
            numbers["\(test.id)"] = number
            return number
        }
        return "\(test.id) case \(number)"
    }

    private static let caseNumbers = Locked<[String: Int]>([:])
}

extension Trait where Self == TestWatchdog {
    /// ``TestWatchdog`` with a limit per test (default 5 minutes, far beyond any test's usual time on a
    /// loaded machine) and a minute's grace after cancelling; `startsFirst` for the run's longest serialized suite.
    public static func watchdog(limit: Duration = .seconds(300), grace: Duration = .seconds(60), startsFirst: Bool = false) -> Self {
        TestWatchdog(limit: limit, grace: grace, startsFirst: startsFirst)
    }
}

/// At most `width` holders at once; the others wait their turn, first come first served within their place: those
/// that go first, then those that go ahead, then the rest. None holds a thread while it waits.
final class TurnTaking: Sendable {
    enum Place: Sendable {
        case first, ahead, last
    }

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// How many at the front of `waiting` go first, and how many after them go ahead.
        var first = 0
        var ahead = 0
    }
    private let state: Locked<State>

    init(width: Int) { state = Locked(State(free: width)) }

    func enter(_ place: Place = .last) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    switch place {
                    case .first:
                        state.waiting.insert(continuation, at: state.first)
                        state.first += 1
                    case .ahead:
                        state.waiting.insert(continuation, at: state.first + state.ahead)
                        state.ahead += 1
                    case .last:
                        state.waiting.append(continuation)
                    }
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            if state.first > 0 { state.first -= 1 } else if state.ahead > 0 { state.ahead -= 1 }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
#endif
