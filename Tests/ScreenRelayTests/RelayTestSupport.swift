import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import ScreenMedia
import ScreenRelay
import ScreenSession
import ScreenWire

/// A real relay on a free loopback port, for one test.
final class RunningRelay: Sendable {
    static let secret = "test-relay-secret-that-is-32-bytes-or-more"
    let server: RelayServer
    let port: Int
    private let task: Task<Void, any Error>

    init() async throws {
        var logger = Logger(label: "relay-test")
        // Tests end by cancelling the relay, which Hummingbird reports as an error; only crashes matter here.
        logger.logLevel = .critical
        let server = try await RelayServer(configuration: .init(host: "127.0.0.1", port: 0, secret: Self.secret), logger: logger)
        self.server = server
        task = Task { try await server.run() }
        port = await server.waitUntilListening()
    }

    deinit { task.cancel() }

    var base: String { "http://127.0.0.1:\(port)" }
    var webSocketURL: String { "ws://127.0.0.1:\(port)/ws" }

    struct SessionCreated: Decodable { var sessionId: String; var token: String; var relayURL: String; var viewerURL: String }
    struct TokenMinted: Decodable { var token: String }

    /// POST with the relay secret (or `secret`), returning status and body.
    func post(_ path: String, json: [String: Any]? = nil, secret: String? = RunningRelay.secret) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        if let secret { request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    func get(_ path: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: base + path)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    func createSession() async throws -> SessionCreated {
        let (status, data) = try await post("/session")
        guard status == 200 else { throw TestFailure("POST /session answered \(status): \(String(decoding: data, as: UTF8.self))") }
        return try JSONDecoder().decode(SessionCreated.self, from: data)
    }

    func token(session: String, role: Role, expiresIn: Double = 3600, data: String = "") async throws -> String {
        let (status, body) = try await post("/session/\(session)/token", json: ["role": role.rawValue, "expiresIn": expiresIn, "data": data])
        guard status == 200 else { throw TestFailure("token answered \(status): \(String(decoding: body, as: UTF8.self))") }
        return try JSONDecoder().decode(TokenMinted.self, from: body).token
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let quietLogger: Logger = {
    var logger = Logger(label: "relay-client-test")
    logger.logLevel = .warning
    return logger
}()

/// The two ways to reach a relay, for tests that must hold over both.
enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case webSocket
    case inProcess

    var description: String { rawValue }

    func to(_ relay: RunningRelay) -> any RelayTransport {
        switch self {
        case .webSocket: WebSocketTransport(url: relay.webSocketURL)
        case .inProcess: relay.server.inProcessTransport
        }
    }
}
