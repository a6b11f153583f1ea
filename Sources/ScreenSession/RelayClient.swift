public import Logging
public import NIOCore
import ScreenMedia
public import ScreenWire
public import ScreenTransport
import ScreenTransportClient

/// What arrives from the relay.
public enum RelayEvent: Sendable {
    case control(ControlMessage)
    /// A media frame of a subscribed stream; `payload` is the VP8/VP9 data, a view of the received message
    /// (copy it with `Array(payload.readableBytesView)` to keep it as bytes).
    case media(MediaFrameHeader, payload: ByteBuffer)
    /// An audio frame of a stream subscribed with audio; `payload` is the Opus packet, a view of the message.
    case audio(AudioFrameHeader, payload: ByteBuffer)
}

/// The sending side of a relay connection, in protocol terms.
public struct RelayLink: Sendable {
    let outbound: RelayOutbound

    public func send(_ message: ControlMessage) async throws {
        try await outbound.send(.text(message.encoded()))
    }

    /// Sends one media frame: header and metadata from `header`, then `payload`.
    public func send(_ header: MediaFrameHeader, payload: some Collection<UInt8>) async throws {
        try await sendBinary(headerSize: header.encodedSize, header.encode(into:), payload: payload)
    }

    /// Sends raw bytes as a binary message (for tests of malformed input).
    public func sendRaw(_ bytes: [UInt8]) async throws {
        try await outbound.send(.binary(ByteBuffer(bytes: bytes)))
    }

    public func sendRawText(_ text: String) async throws {
        try await outbound.send(.text(text))
    }

    /// Sends one audio frame.
    public func send(_ header: AudioFrameHeader, payload: some Collection<UInt8>) async throws {
        try await sendBinary(headerSize: header.encodedSize, header.encode(into:), payload: payload)
    }

    /// One binary message: a header written by `encodeHeader`, then the payload.
    private func sendBinary(
        headerSize: Int, _ encodeHeader: (UnsafeMutableRawBufferPointer) -> Int, payload: some Collection<UInt8>
    ) async throws {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(headerSize + payload.count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headerSize, encodeHeader)
        buffer.writeBytes(payload)
        try await outbound.send(.binary(buffer))
    }

    /// Closes the connection normally; the events then end.
    public func close() async throws {
        try await outbound.close()
    }
}

/// What the relay sends, read from the socket only as it is iterated: a client that stops iterating stops
/// reading, and the relay sees the backpressure (it drops that client's frames, never anyone else's).
/// Iterate it from one task.
public final class RelayEvents: AsyncSequence {
    public typealias Element = RelayEvent
    private let inbound: RelayInbound

    init(_ inbound: RelayInbound) { self.inbound = inbound }

    /// The next event; nil when the connection ended. Media of a kind this version does not know is skipped.
    public func next() async throws -> RelayEvent? {
        while let message = try await inbound.next() {
            switch message {
            case .text(let text):
                return .control(try ControlMessage.parse(text))
            case .binary(let buffer):
                let parsed = try buffer.withUnsafeReadableBytes { bytes throws(WireError) in try MediaMessage.parse(bytes) }
                // A slice shares the received storage: no copy, no allocation per frame.
                func payload(_ range: Range<Int>) throws -> ByteBuffer {
                    guard let payload = buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count) else {
                        throw WireError(.malformed, "media payload outside its message")
                    }
                    return payload
                }
                switch parsed {
                case .video(let header, let range): return .media(header, payload: try payload(range))
                case .audio(let header, let range): return .audio(header, payload: try payload(range))
                case .unknownKind: continue
                }
            }
        }
        return nil
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let events: RelayEvents
        public mutating func next() async throws -> RelayEvent? { try await events.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(events: self) }

    /// The next control message, skipping media; nil when the connection ended.
    public func nextControl(where predicate: (ControlMessage) -> Bool = { _ in true }) async throws -> ControlMessage? {
        while let event = try await next() {
            if case .control(let message) = event, predicate(message) { return message }
        }
        return nil
    }
}

@available(*, unavailable, message: "iterate relay events from one task")
extension RelayEvents: Sendable {}

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

