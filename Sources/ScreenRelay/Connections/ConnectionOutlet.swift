import Hummingbird
import Synchronization
import ScreenTransport
import ScreenWire

/// What a connection's writer task sends, in order.
enum Outgoing: Sendable {
    /// A video frame; `flags`: the flags byte this subscriber gets in place of the frame's own (its layer cleared,
    /// its catch-up bit set), written over the shared buffer as it goes out, so that no subscriber costs a copy.
    case frame(ByteBuffer, streamId: UInt32, flags: MediaFrameHeader.Flags? = nil)
    /// Goes ahead of queued video frames: sound is never held back by pictures.
    case audio(ByteBuffer, streamId: UInt32)
    case control(String)
    case close(WireErrorCode, String)

    /// What it counts in its connection's budget: its bytes and the queue's entry for it.
    var queuedBytes: Int {
        let overhead = 64
        switch self {
        case .frame(let buffer, _, _), .audio(let buffer, _): return buffer.readableBytes + overhead
        case .control(let text): return text.utf8.count + overhead
        case .close(_, let reason): return reason.utf8.count + overhead
        }
    }

    /// The stream a media item belongs to (nil: control and close).
    var mediaStreamId: UInt32? {
        switch self {
        case .frame(_, let streamId, _), .audio(_, let streamId): streamId
        case .control, .close: nil
        }
    }
}

/// A connection's outgoing queue: what the session sends it, in order, drained by its writer task.
///
/// Everything queued counts in bytes when it is queued and stops counting when it is written or dropped: media,
/// control messages and the close, against the connection's own budget (``Limits/bytes``) and the relay's ceiling
/// (``QueuedBytesBudget``). Control messages are also bounded in count and bytes of their own. A connection past
/// any of them is closed (``overflowed``) with the reason, and what it had queued is dropped: it does not read
/// what it is sent. The router bounds each subscription's media well under the budget (a few seconds, then it
/// thins and skips), so an honest slow viewer is thinned, not closed. When a subscription ends, what was queued for
/// it and not yet written goes (``discardMedia(of:)``): re-subscribing never stacks a second copy of anything.
///
/// Audio frames wait in a queue of their own and are sent before any queued video frame (a 200 KB keyframe
/// ahead of them would hold the sound back by its transfer time); control messages keep their order relative
/// to video frames.
///
/// Its own queue rather than an `AsyncStream`: under a writer that lags now and then, the stream's buffer kept
/// growing with the number of messages that ever passed through it (+2.5 MB a minute at 450 frames/s out,
/// found by Benchmarks/soak.sh), although it held a handful at a time.
final class ConnectionOutlet: Sendable {
    /// The bounds of one connection's queue: everything in it, in bytes (`RelayConfiguration.maximumQueuedBytes`),
    /// and its control messages in count and bytes (`maximumQueuedControlMessages`, `maximumQueuedControlBytes`).
    struct Limits: Sendable {
        var messages: Int
        var controlBytes: Int
        var bytes: Int

        init(messages: Int, controlBytes: Int, bytes: Int = RelayConfiguration.defaultMaximumQueuedBytes) {
            self.messages = messages
            self.controlBytes = controlBytes
            self.bytes = bytes
        }
    }

    fileprivate struct State {
        var queue = FIFO<Outgoing>()
        var audio = FIFO<Outgoing>()
        /// The writer, when it waits for the next item.
        var waiting: CheckedContinuation<Outgoing?, Never>?
        /// What a writer on the channel's event loop left to be called when the queue it found empty has an item
        /// again, or ends (``take(orWhenReady:)``).
        var whenReady: (@Sendable () -> Void)?
        var finished = false
        var messages = 0
        var controlBytes = 0
        /// Everything queued, as ``Outgoing/queuedBytes`` counts it.
        var bytes = 0
        var overflowed = false
        var onOverflow: (@Sendable (String) -> Void)?
    }

    private let limits: Limits
    private let relay: QueuedBytesBudget
    private let metrics: RelayMetrics?
    private let state = Mutex(State())
    /// What the kernel knows of the connection's socket, and its pacing (nil: no socket, in process).
    let link: LinkControl?

    init(limits: Limits, relay: QueuedBytesBudget = QueuedBytesBudget(), metrics: RelayMetrics? = nil, link: LinkControl? = nil) {
        self.limits = limits
        self.relay = relay
        self.metrics = metrics
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
        state.withLock { state in overflow(&state) }.deliver(reason: reason)
    }

    /// True once the bounds were passed: the writer drops what is left and the connection closes.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    /// Bytes queued now (everything, as the budget counts them).
    var queuedBytes: Int { state.withLock { $0.bytes } }

    func yield(_ item: Outgoing) {
        let size = item.queuedBytes
        let isControl = if case .control = item { true } else { false }
        enum Outcome { case queued, readied(@Sendable () -> Void), handed(CheckedContinuation<Outgoing?, Never>), overflowed(OverflowNotice, reason: String), dropped }
        let outcome: Outcome = state.withLock { state in
            if state.overflowed || state.finished { return .dropped }
            let refusal: (RelayLimit, String)? =
                isControl && (state.messages + 1 > limits.messages || state.controlBytes + size > limits.controlBytes)
                ? (.queuedControl, "it does not read what it is sent (more than \(limits.messages) control messages or \(limits.controlBytes) bytes of them queued)")
                : state.bytes + size > limits.bytes
                ? (.queuedBytes, "it does not read what it is sent (more than \(limits.bytes) bytes queued)")
                : !relay.take(size, holding: state.bytes)
                ? (.relayQueuedBytes, "the relay's queues are full (\(relay.ceiling) bytes) and it holds more than its share of them")
                : nil
            if let (limit, reason) = refusal {
                metrics?.refused(limit)
                return .overflowed(overflow(&state), reason: reason)
            }
            state.bytes += size
            if isControl {
                state.messages += 1
                state.controlBytes += size
            }
            if let waiting = state.takeWaitingWriter() { return .handed(waiting) }
            if case .audio = item { state.audio.append(item) } else { state.queue.append(item) }
            return state.takeWhenReady().map(Outcome.readied) ?? .queued
        }
        switch outcome {
        case .queued, .dropped: break
        case .readied(let ready): ready()
        case .handed(let writer): writer.resume(returning: item)
        case .overflowed(let notice, let reason): notice.deliver(reason: reason)
        }
    }

    /// The next item for the writer, in order; nil once finished (or overflowed) and drained, or when the
    /// writer's task is cancelled. One writer at a time.
    func next() async -> Outgoing? {
        // What is queued already is taken without a continuation or a cancellation handler: a writer behind a
        // fan-out finds its next frame queued, thousands of times a second.
        if let ready = state.withLock({ $0.popNext() }) { return ready }
        return await withTaskCancellationHandler {
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
            state.withLock { $0.takeWaitingWriter() }?.resume(returning: nil)
        }
    }

    /// What a writer that runs on its channel's event loop takes next (``ChannelOutletWriter``): an item, in the
    /// order ``next()`` gives them; or nothing yet, and then `ready` is called once when there is (or the outlet
    /// ends); or the end.
    enum Taken { case item(Outgoing), later, ended }

    func take(orWhenReady ready: @escaping @Sendable () -> Void) -> Taken {
        state.withLock { state in
            if let item = state.popNext() { return .item(item) }
            if state.finished { return .ended }
            state.whenReady = ready
            return .later
        }
    }

    /// The writer has sent `item` (or dropped it): it no longer counts.
    func sent(_ item: Outgoing) {
        let size = item.queuedBytes
        let isControl = if case .control = item { true } else { false }
        state.withLock { state in
            // Dropped all at once when the connection overflowed: nothing left to give back.
            guard !state.overflowed else { return }
            state.bytes -= size
            if isControl {
                state.messages -= 1
                state.controlBytes -= size
            }
            relay.release(size, remaining: state.bytes)
        }
    }

    /// A subscription of this connection ended: its media queued and not yet written goes, and stops counting.
    /// Returns how many video frames went (their deliveries will never be reported).
    @discardableResult
    func discardMedia(of streamId: UInt32) -> Int {
        state.withLock { state in
            var frames = 0
            var freed = 0
            func keep(_ item: Outgoing) -> Bool {
                guard item.mediaStreamId == streamId else { return true }
                if case .frame = item { frames += 1 }
                freed += item.queuedBytes
                return false
            }
            state.queue.removeAll { !keep($0) }
            state.audio.removeAll { !keep($0) }
            if freed > 0, !state.overflowed {
                state.bytes -= freed
                relay.release(freed, remaining: state.bytes)
            }
            return frames
        }
    }

    /// No more items: the writer drains what is queued and then gets nil.
    func finish() {
        let (writer, ready) = state.withLock { state in
            state.finished = true
            return (state.takeWaitingWriter(), state.takeWhenReady())
        }
        writer?.resume(returning: nil)
        ready?()
    }

    /// Nothing more will be written (the client went, or its writer ended): what is queued goes now and stops
    /// counting, and the outlet is finished (what is yielded later is dropped). Items the writer already took
    /// count until it says they were ``sent(_:)``.
    func discardQueued() {
        let (writer, ready) = state.withLock { state in
            state.finished = true
            var freed = 0
            while let item = state.queue.popFirst() ?? state.audio.popFirst() {
                freed += item.queuedBytes
                if case .control = item {
                    state.messages -= 1
                    state.controlBytes -= item.queuedBytes
                }
            }
            // (After an overflow the queue was dropped and its bytes given back already.)
            if freed > 0, !state.overflowed {
                state.bytes -= freed
                relay.release(freed, remaining: state.bytes)
            }
            return (state.takeWaitingWriter(), state.takeWhenReady())
        }
        writer?.resume(returning: nil)
        ready?()
    }

    /// Whom an overflow tells, once the lock is released: the waiting writer (it gets nil and ends) and the
    /// connection's ``onOverflow(_:)`` action (it closes the connection).
    fileprivate struct OverflowNotice {
        var action: (@Sendable (String) -> Void)?
        var writer: CheckedContinuation<Outgoing?, Never>?
        var ready: (@Sendable () -> Void)?

        func deliver(reason: String) {
            writer?.resume(returning: nil)
            ready?()
            action?(reason)
        }
    }

    /// Marks the connection overflowed and drops its queue (giving its bytes back to the relay); returns whom to
    /// tell. Nobody the second time.
    private func overflow(_ state: inout State) -> OverflowNotice {
        guard !state.overflowed else { return OverflowNotice() }
        state.overflowed = true
        state.finished = true
        state.queue.removeAll()
        state.audio.removeAll()
        relay.release(state.bytes, remaining: 0)
        (state.bytes, state.messages, state.controlBytes) = (0, 0, 0)
        defer { state.onOverflow = nil }
        return OverflowNotice(action: state.onOverflow, writer: state.takeWaitingWriter(), ready: state.takeWhenReady())
    }
}

extension ConnectionOutlet.State {
    /// The writer waiting for the next item, if one waits; it no longer waits here.
    fileprivate mutating func takeWaitingWriter() -> CheckedContinuation<Outgoing?, Never>? {
        defer { waiting = nil }
        return waiting
    }

    fileprivate mutating func takeWhenReady() -> (@Sendable () -> Void)? {
        defer { whenReady = nil }
        return whenReady
    }

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
