public import Logging
import NIOCore
import ScreenMedia
import ScreenWire
public import ScreenTransport
import ScreenTransportClient

/// A client connection to screenrelay: opens the transport, says hello with the token and runs `body` with
/// the sending side and the events (the first is `welcome` or the relay's `error`).
/// The connection closes when `body` returns.
public enum RelayClient {
    public static func connect<Result: Sendable>(
        transport: some RelayTransport, token: String, client: String = "screenpub", logger: Logger,
        _ body: @escaping @Sendable (RelayLink, RelayEvents) async throws -> Result
    ) async throws -> Result {
        try await transport.open(logger: logger) { outbound, inbound in
            let link = RelayLink(outbound: outbound)
            try await link.send(.hello(token: token, client: client))
            return try await body(link, RelayEvents(inbound))
        }
    }

    /// Connects over a WebSocket to `url` (`ws://host:port/ws`).
    public static func connect<Result: Sendable>(
        url: String, token: String, client: String = "screenpub", logger: Logger,
        _ body: @escaping @Sendable (RelayLink, RelayEvents) async throws -> Result
    ) async throws -> Result {
        try await connect(transport: WebSocketTransport(url: url), token: token, client: client, logger: logger, body)
    }
}

