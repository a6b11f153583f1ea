public import Logging
public import NIOCore
import ScreenMedia
import ScreenWire

/// One message of the relay protocol as a transport carries it: a JSON control message or a binary media
/// frame (docs/protocol.md).
public enum RelayMessage: Sendable {
    case text(String)
    case binary(ByteBuffer)
}

/// How a client reaches a relay. ``WebSocketTransport`` goes over the network; a relay in the same process
/// offers an ``InProcessTransport`` (`RelayServer.inProcessTransport`) with the same protocol and the same
/// backpressure, without sockets.
public protocol RelayTransport: Sendable {
    /// Where the transport leads, for logs and messages.
    var endpoint: String { get }

    /// Opens one connection and runs `body` with its two directions; the connection closes when `body`
    /// returns or throws. Throws ``RelayClientError`` with `.unreachable` when it cannot be opened.
    func open<Result: Sendable>(
        logger: Logger, _ body: @escaping @Sendable (RelayOutbound, RelayInbound) async throws -> Result
    ) async throws -> Result
}

/// The sending direction of a connection.
public struct RelayOutbound: Sendable {
    private let sendMessage: @Sendable (RelayMessage) async throws -> Void
    private let closeConnection: @Sendable () async throws -> Void
    /// The TCP socket below, when there is one (not in process): what the kernel holds of what was sent, and its
    /// pacing.
    public let socket: LinkControl?

    public init(
        send: @escaping @Sendable (RelayMessage) async throws -> Void, close: @escaping @Sendable () async throws -> Void,
        socket: LinkControl? = nil
    ) {
        sendMessage = send
        closeConnection = close
        self.socket = socket
    }

    /// Sends one message; waits while the transport applies backpressure.
    public func send(_ message: RelayMessage) async throws { try await sendMessage(message) }

    /// Closes the connection normally; the peer's inbound then ends.
    public func close() async throws { try await closeConnection() }
}

/// The receiving direction of a connection: messages are read from the transport only as they are asked
/// for, so a client that stops asking exerts backpressure on the relay. Use it from one task.
public final class RelayInbound {
    private let nextMessage: () async throws -> RelayMessage?

    public init(next: @escaping () async throws -> RelayMessage?) { nextMessage = next }

    /// The next message; nil when the connection has ended.
    public func next() async throws -> RelayMessage? { try await nextMessage() }
}

@available(*, unavailable, message: "read a connection from one task")
extension RelayInbound: Sendable {}

