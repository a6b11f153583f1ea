import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import ScreenTransport
import WSClient
@_spi(WSInternal) import WSCore

/// The publisher's and subscribers' connection to a relay as a NIO channel of screenpub's own (swift-websocket's
/// client keeps its channel to itself): TLS for `wss://`, the HTTP upgrade to a WebSocket, then swift-websocket's
/// frame handling (`WebSocketHandler`) runs `body` with the socket below (``LinkControl``), whose `TCP_INFO` and
/// pacing the publisher's uplink needs.
struct RelayWebSocketChannel: ClientConnectionChannel {
    typealias Body = @Sendable (WebSocketInboundStream, WebSocketOutboundWriter, LinkControl) async throws -> Void

    enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    struct Context: WebSocketContext {
        let logger: Logger
    }

    let address: RelayAddress
    let tls: NIOSSLContext?
    let body: Body

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<EventLoopFuture<Upgrade>> {
        channel.eventLoop.makeCompletedFuture {
            let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: WebSocketLimits.maximumFrameSize) { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                }
            }
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: address.hostHeader)
            headers.add(name: "Origin", value: "\(address.secure ? "wss" : "ws")://\(address.host)")
            let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: address.target, headers: headers)
            var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                    upgradeRequestHead: request, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { $0.eventLoop.makeSucceededFuture(.refused) }))
            configuration.leftOverBytesStrategy = .forwardBytes
            if let tls {
                // The host as given, name or address: an address is refused for SNI, and ClientTrust says why.
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: address.host), position: .first)
            }
            return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: configuration)
        }
    }

    func handle(value: EventLoopFuture<Upgrade>, logger: Logger) async throws {
        guard case .websocket(let channel) = try await value.get() else {
            throw RelayClientError(.unreachable, "it answered without upgrading to a WebSocket")
        }
        let socket = LinkControl.socket(channel.channel)
        _ = try await WebSocketHandler.handle(
            type: .client,
            configuration: .init(extensions: [], autoPing: .disabled, validateUTF8: false, maxFrameSize: WebSocketLimits.maximumFrameSize),
            asyncChannel: channel, context: Context(logger: logger)
        ) { inbound, outbound, _ in try await body(inbound, outbound, socket) }
    }
}
