import Logging
public import NIOCore
import ScreenMedia
public import ScreenWire
import ScreenTransport
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
