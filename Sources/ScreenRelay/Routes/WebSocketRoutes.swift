import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import ScreenTransport
import ScreenWire

/// The relay's WebSocket endpoint (`/ws`): one client a connection, within the per-address cap for the clients a
/// trusted proxy forwards, its messages read within their bounds and deadline (``WebSocketMessageReader``), and
/// served by the ``ConnectionDriver``.
struct WebSocketRoutes: RelayRoutes {
    let connections: ConnectionDriver
    /// WebSockets by the client address a trusted proxy forwarded, under the per-address cap (the proxy's own
    /// connections are not capped by address: a loopback or trusted peer carries everyone).
    let forwardedClients: ConnectionGate
    /// `--trust-proxy`.
    let trustedProxies: Set<String>
    let metrics: RelayMetrics
    /// Seconds one message may take to arrive, once it has started.
    let messageDeadlineSeconds: Double
    let maximumControlMessageSize: Int

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.ws(RouterPath(RelayEndpoint.webSocketPath)) { inbound, outbound, context in
            // The upgrade has read the handler: the box that holds it and a copy of the context goes now, not
            // only when the channel closes (a cycle of hummingbird-websocket's, RelayRequestContext).
            context.requestContext.releaseWebSocketHandler()
            let channel = context.requestContext.channel
            // Behind a trusted proxy, the per-address cap counts the client it forwards.
            let client = ForwardedClient.behindProxy(context.request, peer: channel.remoteAddress?.ipAddress, trusted: trustedProxies)
            if client != nil, forwardedClients.admit(client: client) != nil {
                metrics.refused(.connectionsPerAddress)
                try? await outbound.close(
                    .unknown(1013), reason: "\(forwardedClients.limits.perAddress) connections are open from your address; try again later")
                return
            }
            defer { if client != nil { forwardedClients.release(client: client) } }
            Self.keepBuffersSmall(channel)
            let deadline = messageDeadlineSeconds
            var reader = WebSocketMessageReader(
                inbound, channel: channel,
                limits: .init(
                    controlMessageSize: maximumControlMessageSize,
                    deadline: .milliseconds(Int64(deadline * 1000)))
            ) {
                metrics.refused(.messageDeadline)
                ConnectionDriver.drop(after: ConnectionDriver.closeGrace) { [weak channel] in channel?.close(promise: nil) }
                Task { try? await outbound.close(.policyViolation, reason: "a message took longer than \(Int(deadline)) s to arrive") }
            }
            let binaryLimit = reader.binaryLimit
            await connections.serve(
                inbound: RelayInbound {
                    do {
                        return try await reader.next()
                    } catch let violation as WebSocketMessageReader.Violation {
                        if let limit = violation.limit { metrics.refused(limit) } else { metrics.add(.protocolErrors) }
                        ConnectionDriver.drop(after: ConnectionDriver.closeGrace) { [weak channel] in channel?.close(promise: nil) }
                        try? await outbound.close(violation.code, reason: violation.reason)
                        return nil
                    }
                },
                // Written from the channel's event loop, below the WebSocket encoder (``ChannelOutletWriter``).
                output: .channel(channel),
                close: { code, reason in try await outbound.close(Self.closeCode(for: code), reason: String(reason.prefix(120))) },
                // Weakly: the hard close after a close's grace must not keep a connection the client already ended
                // (and its buffers) for those seconds; thousands of refused hellos a second would add up.
                drop: { [weak channel] in channel?.close(promise: nil) },
                joinedAs: { role in if role.mayPublish { binaryLimit.withLock { $0 = WebSocketLimits.maximumMessageSize } } },
                link: .socket(channel),
                logger: context.logger)
        }
    }

    /// What a subscriber has not taken must wait in its queue, where the router measures and thins it, not in
    /// buffers below it: the kernel keeps at most ``unsentSocketBytes`` unsent (`TCP_NOTSENT_LOWAT`) and the
    /// channel takes a new message only once its own buffer is under ``channelWaterMarks``. A connection that
    /// cannot take these options (not TCP) keeps its defaults.
    static func keepBuffersSmall(_ channel: any Channel) {
        let notSentLowWater = ChannelOptions.Types.SocketOption(level: .tcp, name: .init(rawValue: 25))  // TCP_NOTSENT_LOWAT
        channel.setOption(notSentLowWater, value: SocketOptionValue(unsentSocketBytes)).whenFailure { _ in }
        channel.setOption(ChannelOptions.writeBufferWaterMark, value: channelWaterMarks).whenFailure { _ in }
    }

    static let unsentSocketBytes = 8 << 10
    static let channelWaterMarks = ChannelOptions.Types.WriteBufferWaterMark(low: 8 << 10, high: 16 << 10)

    static func closeCode(for code: WireErrorCode) -> WebSocketErrorCode {
        switch code {
        case .tooLarge: .messageTooLarge
        case .invalidToken, .tokenExpired, .wrongSession, .forbidden: .policyViolation
        case .malformed, .unsupportedVersion, .unknownMessage, .metadataTooLarge, .badState, .notFound, .invalidSignal: .protocolError
        case .tooSlow, .rateLimited: .policyViolation
        case .full: .unknown(1013)  // "Try Again Later" (RFC 6455 registry)
        case .internalError: .unexpectedServerError
        }
    }
}
