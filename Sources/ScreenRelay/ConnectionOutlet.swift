import Hummingbird
import Synchronization
import ScreenWire

/// What a connection's writer task sends, in order.
enum Outgoing: Sendable {
    case frame(ByteBuffer, streamId: UInt32)
    /// Goes ahead of queued video frames: sound is never held back by pictures.
    case audio(ByteBuffer, streamId: UInt32)
    case control(String)
    case close(WireErrorCode, String)
}

/// A connection's outgoing queue: what the session sends it, in order, drained by its writer task.
///
/// Media frames are bounded by the router (a few per subscriber, then drop to the next keyframe). Control
/// messages — signals, announcements — are bounded here, in count and bytes: a connection that stops reading
/// while it or others keep sending it signals is closed (``overflowed``) instead of growing the relay's
/// memory, and what it had queued is dropped.
///
/// Audio frames wait in a queue of their own and are sent before any queued video frame (a 200 KB keyframe
/// ahead of them would hold the sound back by its transfer time); control messages keep their order relative
/// to video frames.
///
/// Its own queue rather than an `AsyncStream`: under a writer that lags now and then, the stream's buffer kept
/// growing with the number of messages that ever passed through it (+2.5 MB a minute at 450 frames/s out,
/// found by Benchmarks/soak.sh), although it held a handful at a time.
final class ConnectionOutlet: Sendable {
    /// The bounds of one connection's queued control messages (`RelayConfiguration.maximumQueuedControlMessages`
    /// and `maximumQueuedControlBytes`).
    struct Limits: Sendable {
        var messages: Int
        var bytes: Int
    }

    fileprivate struct State {
        var queue = FIFO<Outgoing>()
        var audio = FIFO<Outgoing>()
        /// The writer, when it waits for the next item.
        var waiting: CheckedContinuation<Outgoing?, Never>?
        var finished = false
        var messages = 0
        var bytes = 0
        var overflowed = false
        var onOverflow: (@Sendable (String) -> Void)?
    }

    private let limits: Limits
    private let state = Mutex(State())
    /// What the kernel knows of the connection's socket, and its pacing (nil: no socket, in process).
    let link: LinkControl?

    init(limits: Limits, link: LinkControl? = nil) {
        self.limits = limits
        self.link = link
    }

    /// What to do when the bounds are passed or the session evicts the connection (close it), with why;
    /// called once.
    func onOverflow(_ action: @escaping @Sendable (_ reason: String) -> Void) {
        state.withLock { $0.onOverflow = action }
    }

    /// The session gives up on this connection (it took none of its queued media for too long): what is queued
    /// is dropped and the connection closed, as when its queue overflows.
    func evict(reason: String) {
        let (action, writer) = state.withLock { state -> ((@Sendable (String) -> Void)?, CheckedContinuation<Outgoing?, Never>?) in
            guard !state.overflowed else { return (nil, nil) }
            state.overflowed = true
            state.finished = true
            state.queue.removeAll()
            state.audio.removeAll()
            defer { (state.onOverflow, state.waiting) = (nil, nil) }
            return (state.onOverflow, state.waiting)
        }
        writer?.resume(returning: nil)
        action?(reason)
    }

    /// True once the bounds were passed: the writer drops what is left and the connection closes.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    func yield(_ item: Outgoing) {
        let size = Self.controlSize(item)
        enum Outcome { case queued, handed(CheckedContinuation<Outgoing?, Never>), overflowed((@Sendable (String) -> Void)?, CheckedContinuation<Outgoing?, Never>?), dropped }
        let outcome: Outcome = state.withLock { state in
            if state.overflowed || state.finished { return .dropped }
            state.messages += size == nil ? 0 : 1
            state.bytes += size ?? 0
            if state.messages > limits.messages || state.bytes > limits.bytes {
                state.overflowed = true
                state.finished = true
                state.queue.removeAll()
                state.audio.removeAll()
                defer { (state.onOverflow, state.waiting) = (nil, nil) }
                return .overflowed(state.onOverflow, state.waiting)
            }
            if let waiting = state.waiting {
                state.waiting = nil
                return .handed(waiting)
            }
            if case .audio = item { state.audio.append(item) } else { state.queue.append(item) }
            return .queued
        }
        switch outcome {
        case .queued, .dropped: break
        case .handed(let writer): writer.resume(returning: item)
        case .overflowed(let action, let writer):
            writer?.resume(returning: nil)
            action?("it does not read what it is sent (more than \(limits.messages) messages or \(limits.bytes) bytes queued)")
        }
    }

    /// The next item for the writer, in order; nil once finished (or overflowed) and drained, or when the
    /// writer's task is cancelled. One writer at a time.
    func next() async -> Outgoing? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outgoing?, Never>) in
                let ready: Outgoing?? = state.withLock { state in
                    if let item = state.popNext() { return .some(item) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Outgoing?, Never>? in
                defer { state.waiting = nil }
                return state.waiting
            }?.resume(returning: nil)
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

    /// No more items: the writer drains what is queued and then gets nil.
    func finish() {
        state.withLock { state -> CheckedContinuation<Outgoing?, Never>? in
            state.finished = true
            defer { state.waiting = nil }
            return state.waiting
        }?.resume(returning: nil)
    }

    /// Bytes a control message holds queued; nil for media (bounded by the router) and closes.
    private static func controlSize(_ item: Outgoing) -> Int? {
        if case .control(let text) = item { text.utf8.count } else { nil }
    }
}

extension ConnectionOutlet.State {
    /// Audio first, unless a control message or close is next in the main queue (it keeps its place before
    /// the frames queued after it).
    fileprivate mutating func popNext() -> Outgoing? {
        if !audio.isEmpty {
            switch queue.first {
            case nil, .frame?: return audio.popFirst()
            default: break
            }
        }
        return queue.popFirst() ?? audio.popFirst()
    }
}
