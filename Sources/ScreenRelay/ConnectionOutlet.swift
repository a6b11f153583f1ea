import Hummingbird
import Synchronization
import ScreenWire

/// What a connection's writer task sends, in order.
enum Outgoing: Sendable {
    case frame(ByteBuffer, streamId: UInt32)
    case control(String)
    case close(WireErrorCode, String)
}

/// A connection's outgoing queue: what the session sends it, in order, drained by its writer task.
///
/// Media frames are bounded by the router (a few per subscriber, then drop to the next keyframe). Control
/// messages — signals, announcements — are bounded here, in count and bytes: a connection that stops reading
/// while it or others keep sending it signals is closed (``overflowed``) instead of growing the relay's
/// memory, and what it had queued is dropped.
final class ConnectionOutlet: Sendable {
    /// The bounds of one connection's queued control messages (`RelayConfiguration.maximumQueuedControlMessages`
    /// and `maximumQueuedControlBytes`).
    struct Limits: Sendable {
        var messages: Int
        var bytes: Int
    }

    private let continuation: AsyncStream<Outgoing>.Continuation
    private let limits: Limits
    private let state = Mutex<(messages: Int, bytes: Int, overflowed: Bool, onOverflow: (@Sendable () -> Void)?)>((0, 0, false, nil))

    /// The queue to drain, and the outlet that fills it.
    static func make(limits: Limits) -> (AsyncStream<Outgoing>, ConnectionOutlet) {
        let (stream, continuation) = AsyncStream<Outgoing>.makeStream()
        return (stream, ConnectionOutlet(continuation: continuation, limits: limits))
    }

    private init(continuation: AsyncStream<Outgoing>.Continuation, limits: Limits) {
        self.continuation = continuation
        self.limits = limits
    }

    /// What to do when the bounds are passed (close the connection); called once.
    func onOverflow(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onOverflow = action }
    }

    /// True once the bounds were passed: the writer drops what is left and the connection closes.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    func yield(_ item: Outgoing) {
        let size = Self.controlSize(item)
        let overflow: (@Sendable () -> Void)?? = state.withLock { state in
            if state.overflowed { return .some(nil) }
            state.messages += size == nil ? 0 : 1
            state.bytes += size ?? 0
            guard state.messages > limits.messages || state.bytes > limits.bytes else { return nil }
            state.overflowed = true
            defer { state.onOverflow = nil }
            return .some(state.onOverflow)
        }
        switch overflow {
        case .none: continuation.yield(item)
        case .some(let action?):
            continuation.finish()
            action()
        case .some(nil): break
        }
    }

    /// The writer has sent `item` (or dropped it): it no longer counts.
    func sent(_ item: Outgoing) {
        guard let size = Self.controlSize(item) else { return }
        state.withLock { state in
            state.messages -= 1
            state.bytes -= size
        }
    }

    func finish() { continuation.finish() }

    /// Bytes a control message holds queued; nil for media (bounded by the router) and closes.
    private static func controlSize(_ item: Outgoing) -> Int? {
        if case .control(let text) = item { text.utf8.count } else { nil }
    }
}
