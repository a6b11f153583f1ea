import Crypto
import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenRelay
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenTesting
import ScreenWire
import Testing

/// What screenrelay writes to its log: machine-readable on request, and never its secret.
@Suite(.watchdog()) struct RelayLogTests {
    let screenrelay = ChildProcess.productsDirectory + "/screenrelay"

    @Test(arguments: ["text", "json"])
    func theLogNeverHoldsTheSecretAndJSONLinesParse(format: String) async throws {
        let directory = ArchiveTests.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secret = "log-test-secret-\(UUID().uuidString)"
        try secret.write(toFile: directory + "/secret", atomically: true, encoding: .utf8)
        let relay = try ChildProcess(screenrelay, [
            "--port", "0", "--data-dir", directory + "/data", "--secret-file", directory + "/secret", "--log-format", format, "--verbose",
        ])
        var base = ""
        for _ in 0..<200 where base.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            if let line = relay.errorsSoFar.split(separator: "\n").first(where: { $0.contains("screenrelay listening on port ") }),
                let after = line.components(separatedBy: "listening on port ").last {
                base = "http://127.0.0.1:\(after.prefix { $0.isNumber })"
            }
        }
        #expect(!base.isEmpty, "\(relay.errorsSoFar)")
        // Calls that carry the secret, a right one and a wrong one, and a session with tokens.
        for presented in [secret, "wrong-\(secret)"] {
            _ = try await RelayHTTPClient().send("POST", base + "/session", bearer: presented)
        }
        relay.signal(SIGTERM)
        let outcome = await relay.wait(timeout: 20)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("session "), "the session was logged")
        #expect(!outcome.standardError.contains(secret), "the secret appeared in the log")
        if format == "json" {
            for line in outcome.standardError.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["level"] is String && object?["message"] is String && object?["time"] is String, "\(line)")
            }
        }
    }
}
