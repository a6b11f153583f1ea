import Foundation
import ScreenTesting
import Testing

/// Every attack of Benchmarks/chaos.py, in short form, against the release screenrelay (the one `make test` builds
/// for the .deb; this build's own where there is none): each beside an honest publisher and viewer, and the script
/// fails when one took the relay's memory past its bound (600 MB at the peak, back within 150 MB of the start after
/// the attackers leave), closed or starved the honest viewer, kept the presenter or a moderator out of the session,
/// or got a viewer reading 32 KB/s closed. What each attack cost is in its output.
@Suite(.serialized, .watchdog()) struct ChaosTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static var relayBinary: String {
        let release = repository + "/.build/release/screenrelay"
        return FileManager.default.isExecutableFile(atPath: release) ? release : ChildProcess.productsDirectory + "/screenrelay"
    }

    @Test func everyAttackLeavesTheRelayWithinItsBoundsAndTheHonestClientsServed() async throws {
        let result = try await ChildProcess.run("/usr/bin/python3", [Self.repository + "/Benchmarks/chaos.py", Self.relayBinary, "4"], timeout: 600)
        #expect(result.status == 0, "\(result.standardOutput.suffix(4000))\n\(result.standardError.suffix(3000))")
        #expect(result.standardOutput.contains("chaos: all bounds held"), "\(result.standardOutput.suffix(4000))")
        for attack in ["10 unread viewers cycle subscribe+catch-up", "2000 hellos with one viewer link", "join/leave churn", "spams stream changes"] {
            #expect(result.standardOutput.contains(attack), "the run never got to: \(attack)")
        }
    }
}
