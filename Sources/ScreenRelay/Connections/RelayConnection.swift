import Foundation
import NIOCore
import ScreenTransport
import ScreenWire

/// One client's connection to the relay, as a pure state machine in the shape of ``StreamRouter``: it is told
/// what happened (a message, the token's verdict, the time, an overflowing outlet) and answers what to do. No
/// clock, no sockets, no session: the server's driver (``ConnectionDriver``) carries the actions
/// out, and tests drive it with made-up times (seconds since 1970).
///
/// States: waiting for `hello` (until a deadline), verifying its token, joined (until the token expires, for
/// viewers and moderators), closing (everything after is ignored).
struct RelayConnection: Sendable {
    enum State: Sendable, Equatable {
        case awaitingHello(deadline: Double)
        case verifying
        /// Joined with `role`; `expiresAt` is when it is cut off (nil: never, a publisher's stream).
        case joined(role: Role, expiresAt: Double?)
        case closing
    }

    enum Action: Sendable {
        /// Check this token, then report with ``tokenVerdict(_:)``.
        case verify(token: String)
        /// Join the grant's session (the publisher's message size limit applies from now).
        case join(SessionGrant)
        /// Hand a control message to the session.
        case control(ControlMessage)
        case video(ByteBuffer, MediaFrameHeader)
        case audio(ByteBuffer, AudioFrameHeader)
        /// Send an error, then close with `closeReason`; count the refusal.
        case refuse(WireError, closeReason: String, counted: RelayMetrics.Name?)
        /// The client does not read what it is sent: drop it now, with what was queued for it.
        case drop
    }

    private(set) var state: State
    private(set) var isDropped = false
    /// Seconds a new connection has to send `hello`.
    let helloTimeout: Double

    init(now: Double, helloTimeout: Double) {
        self.helloTimeout = helloTimeout
        state = .awaitingHello(deadline: now + helloTimeout)
    }

    var isClosing: Bool { state == .closing }

    /// When ``tick(now:)`` has something to do next: the hello deadline or the token's expiry.
    var nextDeadline: Double? {
        switch state {
        case .awaitingHello(let deadline): deadline
        case .joined(_, let expiresAt): expiresAt
        case .verifying, .closing: nil
        }
    }

    mutating func received(_ message: RelayMessage) -> [Action] {
        switch (state, message) {
        case (.closing, _):
            return []
        case (.verifying, _):
            // The driver waits for the verdict before reading on; a message now is out of order.
            return refuse(WireError(.badState, "wait for the answer to hello"))
        case (.awaitingHello, .text(let text)):
            let control: ControlMessage
            do throws(WireError) { control = try ControlMessage.parse(text) } catch { return refuse(error) }
            guard case .hello(let token, _) = control else { return refuse(WireError(.badState, "the first message must be hello")) }
            state = .verifying
            return [.verify(token: token)]
        case (.awaitingHello, .binary):
            return refuse(WireError(.badState, "the first message must be hello"))
        case (.joined, .text(let text)):
            do throws(WireError) { return [.control(try ControlMessage.parse(text))] } catch { return refuse(error) }
        case (.joined(let role, _), .binary) where !role.mayPublish:
            return refuse(WireError(.forbidden, "a \(role.rawValue)'s token may not send media: publish with a publisher's token"))
        case (.joined, .binary(let buffer)):
            let parsed = buffer.withUnsafeReadableBytes { bytes in Result { () throws(WireError) in try MediaMessage.parse(bytes) } }
            switch parsed {
            case .success(.video(let header, _)): return [.video(buffer, header)]
            case .success(.audio(let header, _)): return [.audio(buffer, header)]
            case .success(.unknownKind): return []  // a kind of a later protocol version: not ours to forward
            case .failure(let error): return refuse(error)
            }
        }
    }

    /// The token of `hello` was checked: a grant to a session that exists, or why not (also when the session
    /// ended while joining).
    mutating func tokenVerdict(_ verdict: Result<SessionGrant, WireError>) -> [Action] {
        switch (state, verdict) {
        case (.verifying, _), (.joined, .failure): break
        default: return []
        }
        switch verdict {
        case .failure(let error):
            return refuse(error, counted: .rejectedTokens)
        case .success(let grant):
            // Viewers and moderators are cut off when their token expires. A publisher is not: its stream (a share
            // running for days) would end mid-way; it shows a valid token again on reconnecting.
            state = .joined(role: grant.role, expiresAt: grant.role == .publisher ? nil : grant.expiresAt.timeIntervalSince1970)
            return [.join(grant)]
        }
    }

    /// The time is `now`: past the hello deadline or the token's expiry, the connection is refused.
    mutating func tick(now: Double) -> [Action] {
        guard let deadline = nextDeadline, now >= deadline else { return [] }
        if case .awaitingHello = state {
            return refuse(WireError(.badState, "no hello within \(Int(helloTimeout)) s"), closeReason: "no hello", counted: nil)
        }
        let expired = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: deadline))
        return refuse(
            WireError(.tokenExpired, "the token expired at \(expired); connect again with a new one"),
            closeReason: "the token expired", counted: nil)
    }

    /// The outlet overflowed: the client does not read (not even the refusal, if one was sent).
    mutating func overflowed() -> [Action] {
        guard !isDropped else { return [] }
        isDropped = true
        state = .closing
        return [.drop]
    }

    private mutating func refuse(
        _ error: WireError, closeReason: String? = nil, counted: RelayMetrics.Name? = .protocolErrors
    ) -> [Action] {
        state = .closing
        return [.refuse(error, closeReason: closeReason ?? error.message, counted: counted)]
    }
}
