import Foundation
import ScreenTesting
import Testing

/// Every benchmark script runs to its end in a smoke run (`BENCH_SMOKE=1`, Benchmarks/lib.sh): the smallest
/// screen, the fewest rows and a second or two of each measure, with this build's binaries. Not a timing: its
/// figures mean nothing; a script a change broke fails here, not at the next `make bench`. One after another:
/// each starts its own display, relays, encoders and compositor. (fuzz.sh has its own short run, WireFuzzTests.)
/// The run's longest chain (about 6 of its 37 minutes of heavy tests): it starts first.
@Suite(.serialized, .watchdog(startsFirst: true)) struct BenchmarkSmokeTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Each script with what its last table prints when it got there.
    @Test(arguments: [
        ("run.sh", "| typing (one line every 200 ms), 5 fps | vp9 |"),
        ("codecs.sh", "| pageflip | vp9 |"),
        ("h264.sh", "First picture of a viewer that needs H.264"),
        ("chroma.sh", "| terminal scrolling every frame | 30 | vp9 | 1500 | 444 |"),
        ("allocations.sh", "| libswiftCore.so |"),
        ("relay.sh", " | 2 | "),
        ("relay-instructions.sh", " | 2 | 5 | "),
        ("hls.sh", "| frames | payload bytes |"),
        ("masks.sh", "| typing | --mask-region, a quarter, pixelated |"),
        ("pipewire.sh", "| clock, captured at 5 fps | "),
        ("audio.sh", "A/V at 30 fps: "),
        ("soak.sh", "soak: "),
    ])
    func runsToItsEnd(script: String, lastRow: String) async throws {
        try await expectRunsToItsEnd(script, printing: lastRow)
    }

    /// These make network namespaces (links shaped with tbf; Janus on a veth pair).
    @Test(.enabled(if: getuid() == 0, "network namespaces need root"), arguments: [
        ("network.sh", "uplink controller: "),
        ("whip.sh", "capture → Janus viewer"),
    ])
    func runsToItsEndAsRoot(script: String, lastRow: String) async throws {
        try await expectRunsToItsEnd(script, printing: lastRow)
    }

    private func expectRunsToItsEnd(_ script: String, printing lastRow: String) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BENCH_SMOKE"] = "1"
        environment["BENCH_BIN"] = ChildProcess.productsDirectory
        let result = try await ChildProcess.run(Self.repository + "/Benchmarks/" + script, [], environment: environment, timeout: 300)
        #expect(result.status == 0, "\(script): \(result.standardError.suffix(3000))")
        #expect(result.standardOutput.contains(lastRow), "\(script) stopped before its end:\n\(result.standardOutput.suffix(3000))")
    }
}
