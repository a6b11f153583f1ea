import Foundation
import ScreenTesting
import Testing

/// A short libFuzzer run of Benchmarks/fuzz.sh (its smoke run) — the wire parsers and log escaping (with AddressSanitizer), then
/// a whole relay session driven by scripts of client actions — from the corpus kept in the repository: what a
/// long run found must keep passing.
@Suite(.watchdog()) struct WireFuzzTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test
    func theWireParsersSurviveAShortFuzzRun() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BENCH_SMOKE"] = "1"  // 50 000 executions of each target
        let result = try await ChildProcess.run(Self.repository + "/Benchmarks/fuzz.sh", [], environment: environment, timeout: 420)
        #expect(result.status == 0, "fuzz.sh: \(result.standardError.suffix(3000))")
        #expect(result.standardOutput.contains("wire parsers: 50000 executions"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("relay session: 50000 executions"), "\(result.standardOutput)")
        #expect(result.standardOutput.components(separatedBy: "no crash").count == 3, "\(result.standardOutput)")
    }
}
