public import HummingbirdWSClient
public import Logging
import NIOWebSocket
import ScreenMedia
import ScreenWire

/// The relay protocol over a WebSocket (hummingbird-websocket's client), `ws://` or `wss://`.
public struct WebSocketTransport: RelayTransport {
    public let url: String
    public var endpoint: String { url }

    static let maximumMessage = MediaFrameHeader.size + FrameMetadata.maximumSize + MediaFrameHeader.maximumPayload

    public init(url: String) { self.url = url }

    public func open<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (RelayOutbound, RelayInbound) async throws -> Result
    ) async throws -> Result {
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: Self.maximumMessage), logger: logger
            ) { inbound, outbound, _ in
                let sending = RelayOutbound(
                    send: { try await outbound.write($0.webSocketFrame) },
                    close: { try await outbound.close(.normalClosure, reason: nil) })
                var messages = inbound.messages(maxSize: Self.maximumMessage).makeAsyncIterator()
                let receiving = RelayInbound { try await messages.next().map(RelayMessage.init) }
                let result: Swift.Result<Result, any Error>
                do {
                    result = .success(try await body(sending, receiving))
                } catch {
                    result = .failure(error)
                }
                outcome.withLock { $0 = result }
                try? await outbound.close(.normalClosure, reason: nil)
            }
        } catch {
            if let result = outcome.value { return try result.get() }
            throw RelayClientError(.unreachable, "cannot connect to the relay at \(url): \(error)")
        }
        guard let result = outcome.value else { throw RelayClientError(.closed, "the relay at \(url) closed the connection") }
        return try result.get()
    }
}

// The relay protocol's two message kinds are a WebSocket's two data frame kinds.
extension RelayMessage {
    public init(_ message: WebSocketMessage) {
        switch message {
        case .text(let text): self = .text(text)
        case .binary(let buffer): self = .binary(buffer)
        }
    }

    public var webSocketFrame: WebSocketOutboundWriter.OutboundFrame {
        switch self {
        case .text(let text): .text(text)
        case .binary(let buffer): .binary(buffer)
        }
    }
}
