import Logging
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import Testing

/// Opening the relay protocol's WebSocket where it cannot be opened: each way is a sentence, and none runs the
/// connection's body.
@Suite(.watchdog()) struct WebSocketTransportTests {
    /// The error opening `url` with `trust` throws.
    static func failure(opening url: String, trust: ClientTrust = .system) async -> RelayClientError? {
        do {
            _ = try await WebSocketTransport(url: url, trust: trust).open(logger: Logger(label: "websocket-transport-test")) { _, _ in
                Issue.record("the connection's body ran")
            }
            Issue.record("\(url) opened")
            return nil
        } catch let error as RelayClientError {
            return error
        } catch {
            Issue.record("not a RelayClientError: \(error)")
            return nil
        }
    }

    @Test func aRelayThatIsNotThereIsSaidSo() async throws {
        let nowhere = try RefusingLoopbackPort()
        let url = "ws://127.0.0.1:\(nowhere.port)/ws"
        let error = await Self.failure(opening: url)
        #expect(error?.kind == .unreachable && error?.message == "cannot connect to the relay at \(url): nothing listens there (connection refused)")
    }

    @Test func aServerThatRefusesTheUpgradeIsUnreachable() async throws {
        let server = try await ScriptedHTTPServer { _ in .http(404) }
        let url = "ws://127.0.0.1:\(server.port)/ws"
        let error = await Self.failure(opening: url)
        #expect(error?.kind == .unreachable && error?.message.hasPrefix("cannot connect to the relay at \(url): ") == true, "\(String(describing: error))")
        #expect(server.requests.first?.header("Upgrade")?.lowercased() == "websocket")
    }

    @Test func aSecureRelayWithAnUnusableCAFileIsRefusedBeforeConnecting() async throws {
        let server = try await ScriptedHTTPServer { _ in .close }
        let error = await Self.failure(opening: "wss://127.0.0.1:\(server.port)/ws", trust: ClientTrust(caFile: "/nonexistent/ca.pem"))
        #expect(error?.message == "cannot use the CA file /nonexistent/ca.pem: it cannot be read")
        #expect(server.requests.isEmpty, "nothing connected")
    }
}
