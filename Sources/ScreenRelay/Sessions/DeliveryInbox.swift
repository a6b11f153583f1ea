import Synchronization

/// Deliveries reported by a session's connection writers, waiting for the session to take them together.
///
/// A frame fanned out to a thousand subscribers is written out a thousand times within a few milliseconds; each
/// writer telling the session itself (an actor hop, and its writer waiting for it) cost the relay more than the
/// router's work with it. A writer notes its delivery here, with its time, and goes on; the first note after the
/// session last took them asks the caller to schedule one take, which then has all those noted meanwhile. Nothing
/// is allocated per delivery: the session swaps its emptied array in for the full one.
final class DeliveryInbox: Sendable {
    struct Delivery: Sendable {
        var connectionId: String
        var streamId: UInt32
        var bytes: Int
        var isAudio: Bool
        /// When it was written out (the relay's monotonic seconds): what the router measures the link by.
        var at: Double
    }

    private struct State {
        var pending: [Delivery] = []
        var takeScheduled = false
    }

    private let state = Mutex(State())

    /// Notes a delivery; true when the caller is to schedule a take (none is scheduled yet).
    func note(_ delivery: Delivery) -> Bool {
        state.withLock { state in
            state.pending.append(delivery)
            guard !state.takeScheduled else { return false }
            state.takeScheduled = true
            return true
        }
    }

    /// Swaps `empty` (emptied, its capacity kept) for what was noted; the next note schedules a take again.
    func take(swapping empty: inout [Delivery]) {
        state.withLock { state in
            swap(&state.pending, &empty)
            state.takeScheduled = false
        }
    }
}
