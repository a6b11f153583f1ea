import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import ScreenMedia
import ScreenTransport
import ScreenWire

/// Reads whole messages from a client's WebSocket under the relay's limits: a text message (every control
/// message) and, until a publisher has said hello, a binary one may be at most the control-message size; a
/// message split into fragments must arrive whole within the deadline, in at most a fragment a KiB of its limit
/// (and 16 more); text must be UTF-8. A message that
/// breaks one ends the connection with the WebSocket close code for it (1009, 1008, 1007) and is counted.
struct WebSocketMessageReader {
    struct Limits {
        var controlMessageSize: Int
        var deadline: TimeAmount
    }

    /// Why a connection is closed.
    struct Violation: Error {
        let code: WebSocketErrorCode
        let reason: String
        let limit: RelayLimit?
    }

    private var frames: WebSocketInboundStream.AsyncIterator
    private let limits: Limits
    private let channel: any Channel
    private let onDeadline: @Sendable () -> Void
    /// Binary messages may be this large: the control size until a publisher joins, then a media frame's.
    let binaryLimit: Locked<Int>

    init(_ inbound: WebSocketInboundStream, channel: any Channel, limits: Limits, onDeadline: @escaping @Sendable () -> Void) {
        frames = inbound.makeAsyncIterator()
        self.limits = limits
        self.channel = channel
        self.onDeadline = onDeadline
        binaryLimit = Locked(limits.controlMessageSize)
    }

    mutating func next() async throws -> RelayMessage? {
        guard let first = try await frames.next() else { return nil }
        let isText: Bool
        switch first.opcode {
        case .text: isText = true
        case .binary: isText = false
        case .continuation: throw Violation(code: .protocolError, reason: "a continuation frame without a message", limit: nil)
        }
        let limit = isText ? limits.controlMessageSize : binaryLimit.value
        var data = first.data
        try check(data.readableBytes, limit: limit, isText: isText)
        if !first.fin {
            // The deadline runs from the first fragment: a client cannot hold a half-sent message open.
            let timer = channel.eventLoop.scheduleTask(in: limits.deadline, onDeadline)
            defer { timer.cancel() }
            var finished = false
            var fragments = 1
            let maximumFragments = Self.maximumFragments(limit: limit)
            while !finished {
                guard let frame = try await frames.next() else { return nil }
                guard frame.opcode == .continuation else {
                    throw Violation(code: .protocolError, reason: "a new message began before the last one ended", limit: nil)
                }
                // Empty or tiny fragments cost the relay a step each and bring nothing: a message comes in at most as
                // many fragments as its limit holds kilobytes (and a few more).
                fragments += 1
                guard fragments <= maximumFragments else {
                    throw Violation(
                        code: .policyViolation, reason: "a message in more than \(maximumFragments) fragments", limit: .messageSize)
                }
                try check(data.readableBytes + frame.data.readableBytes, limit: limit, isText: isText)
                var fragment = frame.data
                data.writeBuffer(&fragment)
                finished = frame.fin
            }
        }
        guard isText else { return .binary(data) }
        guard let text = String(validatingUTF8: data) else {
            throw Violation(code: .dataInconsistentWithMessage, reason: "a text message that is not UTF-8", limit: nil)
        }
        return .text(text)
    }

    /// Fragments a message of at most `limit` bytes may come in: one a KiB, and 16 more (screenpub and screensub
    /// send 64 KiB fragments, browsers none).
    static func maximumFragments(limit: Int) -> Int { 16 + limit / 1024 }

    private func check(_ size: Int, limit: Int, isText: Bool) throws {
        guard size > limit else { return }
        throw Violation(
            code: .messageTooLarge, reason: "\(isText ? "a text" : "a binary") message over \(limit) bytes", limit: .messageSize)
    }
}

extension String {
    /// The buffer's bytes as a string, if they are valid UTF-8.
    init?(validatingUTF8 buffer: ByteBuffer) {
        guard let string = buffer.withUnsafeReadableBytes({ String(validating: $0, as: UTF8.self) }) else { return nil }
        self = string
    }
}
