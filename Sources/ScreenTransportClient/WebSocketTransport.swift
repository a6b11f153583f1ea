public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ScreenMedia
public import ScreenTransport
import ScreenWire
import WSClient
import WSCore

/// The relay protocol over a WebSocket, `ws://` or `wss://`, on a channel of screenpub's own
/// (``RelayWebSocketChannel``): its outbound carries the socket below (``RelayOutbound/socket``).
public struct WebSocketTransport: RelayTransport {
    public let url: String
    public var endpoint: String { url }

    /// Whom to trust for a `wss://` relay's certificate.
    public let trust: ClientTrust

    public init(url: String, trust: ClientTrust = .system) {
        self.url = url
        self.trust = trust
    }

    public func open<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (RelayOutbound, RelayInbound) async throws -> Result
    ) async throws -> Result {
        guard let address = RelayAddress(url, plain: "ws", secure: "wss") else {
            throw RelayClientError(.unreachable, "\(url) is not a ws:// or wss:// URL")
        }
        let tls = address.secure ? try trust.tlsConfiguration() : nil
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        do {
            let channel = RelayWebSocketChannel(address: address, tls: try tls.map { try NIOSSLContext(configuration: $0) }) { inbound, outbound, socket in
                // One message at a time: the fragments of a long one must not interleave with another's.
                let writing = AsyncMutex()
                let sending = RelayOutbound(
                    send: { message in try await writing.withLock { try await outbound.write(message) } },
                    close: { try await outbound.close(.normalClosure, reason: nil) },
                    socket: socket)
                var messages = inbound.messages(maxSize: WebSocketLimits.maximumMessageSize).makeAsyncIterator()
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
            try await ClientConnection(channel, address: .hostname(address.host, port: address.port), logger: logger).run()
        } catch {
            if let result = outcome.value { return try result.get() }
            if let refusal = error as? RelayClientError { throw RelayClientError(.unreachable, "cannot connect to the relay at \(url): \(refusal.message)") }
            throw RelayClientError(.unreachable, "cannot connect to the relay at \(url): \(trust.explain(error, url: url))")
        }
        guard let result = outcome.value else { throw RelayClientError(.closed, "the relay at \(url) closed the connection") }
        return try result.get()
    }
}

// The relay protocol's two message kinds are a WebSocket's two data frame kinds.
extension RelayMessage {
    init(_ message: WebSocketMessage) {
        switch message {
        case .text(let text): self = .text(text)
        case .binary(let buffer): self = .binary(buffer)
        }
    }
}

extension WebSocketOutboundWriter {
    /// Writes one relay message, in fragments of ``WebSocketLimits/maximumFrameSize`` when it is longer.
    func write(_ message: RelayMessage) async throws {
        switch message {
        case .text(let text): try await writeTextMessage(text)
        case .binary(let buffer): try await writeBinaryMessage(buffer)
        }
    }
}
