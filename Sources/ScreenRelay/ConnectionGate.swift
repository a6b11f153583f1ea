import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import ScreenMedia

/// Counts the relay's open TCP connections and refuses those past its caps — all of them, and those from one
/// address — so that a flood of idle sockets can never use up the descriptors honest clients and the relay's
/// own files need. Loopback addresses have no per-address cap: a reverse proxy on this machine carries every
/// remote viewer through one of them.
final class ConnectionGate: Sendable {
    struct Limits: Sendable {
        var total: Int
        var perAddress: Int
    }

    enum Refusal: Equatable {
        case total, perAddress
    }

    let limits: Limits
    private let state = Locked<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(limits: Limits) {
        self.limits = limits
    }

    /// Takes a place for a connection from `address`; nil when admitted (give it back with ``release(_:)``).
    func admit(_ address: SocketAddress?) -> Refusal? {
        let key = Self.key(address)
        return state.withLock { state in
            guard state.total < limits.total else { return .total }
            if let key {
                let count = state.byAddress[key, default: 0]
                guard count < limits.perAddress else { return .perAddress }
                state.byAddress[key] = count + 1
            }
            state.total += 1
            return nil
        }
    }

    func release(_ address: SocketAddress?) {
        let key = Self.key(address)
        state.withLock { state in
            state.total -= 1
            if let key {
                let count = state.byAddress[key, default: 1] - 1
                state.byAddress[key] = count > 0 ? count : nil
            }
        }
    }

    var open: Int { state.value.total }

    /// The per-address key: the IP address; nil for loopback and Unix sockets (no per-address cap).
    private static func key(_ address: SocketAddress?) -> String? {
        guard let address, let ip = address.ipAddress else { return nil }
        if ip == "::1" || ip.hasPrefix("127.") || ip.hasPrefix("::ffff:127.") { return nil }
        return ip
    }

    /// Descriptors this process has open, and its limit; nil where /proc is not there.
    static func descriptorUse() -> (open: Int, limit: Int)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0,
            let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        else { return nil }
        return (open, Int(clamping: limit.rlim_cur))
    }

    /// The largest total cap this process can keep: its descriptor limit (raised to the hard limit first)
    /// less room for the relay's own files, archives and outgoing connections.
    static func affordableConnections(_ wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let available = Int(clamping: limit.rlim_cur)
        return max(1, min(wanted, available - max(64, available / 8)))
    }
}

/// One accepted connection of the relay, as it is set up: the gate first (a refused connection is closed
/// before any byte is read), then TLS when the relay has a certificate, then a deadline for the first request's
/// head, then HTTP with the WebSocket upgrade.
struct RelayChildChannel<BaseChannel: ServerChildChannel>: ServerChildChannel {
    typealias Value = BaseChannel.Value
    let base: BaseChannel
    let gate: ConnectionGate
    let tls: ServerTLSContext?
    let requestHeadTimeout: TimeAmount
    let metrics: RelayMetrics
    let refusalLog: RateLimitedLog
    /// TLS handshakes that failed: said apart from refusals, so that neither silences the other.
    let handshakeLog: RateLimitedLog

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress
        if let refusal = gate.admit(address) {
            metrics.refused(refusal == .total ? .totalConnections : .connectionsPerAddress)
            refusalLog.log(
                refusal == .total
                    ? "refusing connections: \(gate.limits.total) are open, the most this relay keeps (max-connections)"
                    : "refusing connections from \(address?.ipAddress ?? "?"): \(gate.limits.perAddress) are open from there (max-connections-per-address)")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        channel.closeFuture.whenComplete { [gate] _ in gate.release(address) }
        return channel.eventLoop.makeCompletedFuture {
            if let tls {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                try channel.pipeline.syncOperations.addHandler(TLSHandshakeFailure(metrics: metrics, log: handshakeLog))
            }
            try channel.pipeline.syncOperations.addHandler(RequestHeadDeadline(timeout: requestHeadTimeout, metrics: metrics))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// A client that fails the TLS handshake (plain HTTP sent to the TLS port, TLS 1.0, a cipher the relay does not
/// offer) is closed here, counted (`tls_handshake`) and said in the log at most once a minute: it is not an error
/// of the relay's, and a stream of them must not flood the log.
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

/// Closes a connection whose first request head (through its blank line) has not arrived within the timeout:
/// a client that trickles its headers, or never sends any, does not keep a socket. Later requests on a kept-alive
/// connection are timed by HTTP's idle timeout, and a WebSocket by its pings.
final class RequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let timeout: TimeAmount
    let metrics: RelayMetrics
    private var timer: Scheduled<Void>?
    /// How much of "\r\n\r\n" the bytes so far end with.
    private var matched = 0

    init(timeout: TimeAmount, metrics: RelayMetrics) {
        self.timeout = timeout
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) { [metrics] in
            metrics.refused(.requestHeadTimeout)
            loopBound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if headEnds(in: buffer) {
            timer?.cancel()
            timer = nil
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    /// The blank line that ends a request head.
    private static let headEnd: [UInt8] = [13, 10, 13, 10]

    private func headEnds(in buffer: ByteBuffer) -> Bool {
        let pattern = Self.headEnd
        return buffer.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                if byte == pattern[matched] {
                    matched += 1
                    if matched == pattern.count { return true }
                } else {
                    matched = byte == 13 ? 1 : 0
                }
            }
            return false
        }
    }
}

/// One log line per interval for a condition that can repeat thousands of times a second (a connection flood).
final class RateLimitedLog: Sendable {
    let logger: Logger
    let interval: Duration
    private let last = Locked<ContinuousClock.Instant?>(nil)

    init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    func log(_ message: @autoclosure () -> String) {
        let now = ContinuousClock.now
        let due = last.withLock { last in
            guard last.map({ now - $0 >= interval }) ?? true else { return false }
            last = now
            return true
        }
        if due { logger.warning("\(message()) (said at most once a minute)") }
    }
}
