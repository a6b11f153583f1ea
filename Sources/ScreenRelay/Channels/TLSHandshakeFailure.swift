import NIOCore
import NIOSSL

/// A client that fails the TLS handshake (plain HTTP sent to the TLS port, TLS 1.0, a cipher the relay does not
/// offer) is closed here, counted (`tls_handshake`) and said in the log at most once a minute, with the number
/// of the others (``RateLimitedLog``): it is not an error of the relay's, and a stream of them must not flood the
/// log.
final class TLSHandshakeFailure: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let metrics: RelayMetrics
    let log: RateLimitedLog

    init(metrics: RelayMetrics, log: RateLimitedLog) {
        self.metrics = metrics
        self.log = log
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is NIOSSLError || error is BoringSSLError else {
            context.fireErrorCaught(error)
            return
        }
        metrics.refused(.tlsHandshake)
        let peer = context.channel.remoteAddress?.ipAddress ?? "?"
        log.log("a client (\(peer)) failed the TLS handshake: plain HTTP to the HTTPS port, or a TLS version or cipher older than TLS 1.2 with forward secrecy")
        context.close(promise: nil)
    }
}
