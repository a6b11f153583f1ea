import Foundation
import ScreenTesting
import Testing

/// Where `screensub --server` takes its token, and what it says when it cannot: a file or the environment keep
/// the token out of `ps`; two sources at once, or a file it cannot read, are refused with a sentence.
@Suite(.watchdog()) struct ScreensubTokenTests {
    func run(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ChildProcess.Outcome {
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != "SCREENSUB_TOKEN" }
        environment.merge(extra) { $1 }
        return try await ChildProcess.run(RunningShare.screensub, arguments, environment: environment, timeout: 30)
    }

    @Test func tokenSourcesAreCheckedBeforeConnecting() async throws {
        let missing = try await run(["--server", "http://127.0.0.1:9", "--token-file", "/nonexistent/token"])
        #expect(missing.status == 64 && missing.standardError.contains("cannot read the token file /nonexistent/token"), "\(missing.standardError)")
        let both = try await run(["--server", "http://127.0.0.1:9", "--token", "a"], environment: ["SCREENSUB_TOKEN": "b"])
        #expect(both.status == 64 && both.standardError.contains("one way only"), "\(both.standardError)")
        let none = try await run(["--server", "http://127.0.0.1:9"])
        #expect(none.status == 64 && none.standardError.contains("--token-file FILE, $SCREENSUB_TOKEN or --token"), "\(none.standardError)")
        // From the environment: the token is taken, and the relay that is not there is the next thing said.
        let fromEnvironment = try await run(["--server", "http://127.0.0.1:9", "--count", "1"], environment: ["SCREENSUB_TOKEN": "eyJx"])
        #expect(fromEnvironment.status == 1, "\(fromEnvironment.standardError)")
    }
}
