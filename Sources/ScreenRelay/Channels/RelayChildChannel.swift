import HTTPTypes
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOSSL

/// One accepted connection of the relay, as it is set up: the gate first (a refused connection is closed before
/// any byte is read), then TLS when the relay has a certificate, then the guard of request heads (their deadline
/// and size, ``RequestHeadGuard``), then HTTP with the WebSocket upgrade, behind which the guard's observer
/// listens.
///
/// Hummingbird is given a connection only once its first request has been read. One that ended before (a head's
/// deadline, a refused head, a failed TLS handshake, a client that went away) was counted where it ended and
/// leaves no line of Hummingbird's in the log; a refused WebSocket upgrade is answered here, and said at most once
/// a minute with the number of the others.
struct RelayChildChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let base: HTTP1WebSocketUpgradeChannel.Value
        /// What the connection's first request came to; failed when the connection ended before one was read.
        let firstRequest: EventLoopFuture<HTTP1WebSocketUpgradeChannel.UpgradeResult>
        var channel: any Channel { base.channel }
    }

    /// The log lines the relay's connections share, each said at most once a minute (``RateLimitedLog``) and apart
    /// from the others, so that none silences another.
    struct Logs: Sendable {
        /// Connections refused at the gate.
        let refusals: RateLimitedLog
        /// TLS handshakes that failed.
        let handshakes: RateLimitedLog
        /// Request heads refused for their size.
        let heads: RateLimitedLog
        /// WebSocket upgrades refused.
        let upgrades: RateLimitedLog

        init(logger: Logger) {
            refusals = RateLimitedLog(logger: logger)
            handshakes = RateLimitedLog(logger: logger)
            heads = RateLimitedLog(logger: logger)
            upgrades = RateLimitedLog(logger: logger)
        }
    }

    let base: HTTP1WebSocketUpgradeChannel
    let gate: ConnectionGate
    let tls: ServerTLSContext?
    let headLimits: RequestHeadGuard.Limits
    /// How long a connection may take none of what is written to it (the idle timeout, ``WriteStallTimeout``).
    let writeStallTimeout: TimeAmount
    let metrics: RelayMetrics
    let logs: Logs
    /// Every accepted connection's channel, weakly, to see that it goes once closed.
    let census: ChannelCensus

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Set up on the connection's event loop (where the server's bootstrap calls this).
        guard channel.eventLoop.inEventLoop else {
            return channel.eventLoop.flatSubmit { self.setup(channel: channel, logger: logger) }
        }
        census.add(channel)
        let address = channel.remoteAddress
        if let refusal = gate.admit(address) {
            metrics.refused(refusal == .total ? .totalConnections : .connectionsPerAddress)
            logs.refusals.log(
                refusal == .total
                    ? "refusing connections: \(gate.limits.total) are open, the most this relay keeps (max-connections)"
                    : "refusing connections from \(address?.ipAddress ?? "?"): \(gate.limits.perAddress) are open from there (max-connections-per-address)")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        channel.closeFuture.whenComplete { [gate] _ in gate.release(address) }
        let headGuard = RequestHeadGuard(limits: headLimits, metrics: metrics, log: logs.heads)
        return channel.eventLoop.makeCompletedFuture {
            if let tls {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                try channel.pipeline.syncOperations.addHandler(TLSHandshakeFailure(metrics: metrics, log: logs.handshakes))
            }
            try channel.pipeline.syncOperations.addHandler(headGuard)
            try channel.pipeline.syncOperations.addHandler(WriteStallTimeout(timeout: writeStallTimeout, metrics: metrics))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.assumeIsolated().flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let upgrader = try pipeline.handler(type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            let observer = RequestHeadGuard.Observer(headGuard)
            try pipeline.addHandler(observer)
            // A WebSocket is timed by its pings: the guard leaves before the upgrade hands on what came after the
            // request (the promise's callbacks run as it is completed, before that).
            upgrader.upgradeResultFuture.assumeIsolated().whenSuccess { result in
                guard case .websocket = result else { return }
                pipeline.removeHandler(observer, promise: nil)
                pipeline.removeHandler(headGuard, promise: nil)
                // Before the first frame: an unmasked one closes the connection, a close stops its writer.
                do { try ClientFrameWatch.install(in: pipeline) } catch { channel.close(promise: nil) }
            }
            return Value(base: value, firstRequest: upgrader.upgradeResultFuture)
        }.nonisolated()
    }

    func handle(value: Value, logger: Logger) async {
        let firstRequest: HTTP1WebSocketUpgradeChannel.UpgradeResult
        do {
            firstRequest = try await value.firstRequest.get()
        } catch {
            // Ended before a request was read: nothing to answer.
            value.channel.close(promise: nil)
            return
        }
        if case .failedUpgrade(let http, _) = firstRequest {
            logs.upgrades.log(
                "refused a WebSocket upgrade from \(value.channel.remoteAddress?.ipAddress ?? "?") (400): not to /ws, or from a Host or page the relay does not serve")
            await Self.refuseUpgrade(http)
            return
        }
        await base.handle(value: value.base, logger: logger)
    }

    /// Answers a refused upgrade 400 with a sentence, and closes.
    static func refuseUpgrade(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        let body = ByteBuffer(
            string: "This relay opens WebSockets only at /ws, for the names it serves and pages of its own (or programs, which send no Origin).\n")
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [.connection: "close", .contentType: "text/plain; charset=utf-8", .contentLength: "\(body.readableBytes)"])
        try? await http.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.head(head), .body(body), .end(nil)])
        }
    }
}
