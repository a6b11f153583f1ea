import Synchronization

/// Players' requests that wait for a part or segment not out yet — an LL-HLS blocking playlist reload
/// (`_HLS_msn`, `_HLS_part`) or a part named by `EXT-X-PRELOAD-HINT` — each resumed when the packager publishes
/// what it waits for, at its deadline (the packager's timer calls ``expire(now:)``), or when HLS stops. At most ``limit`` wait at once (each holds a
/// connection); one more is turned away at once, so a crowd of players costs a bounded number of them.
final class HLSWaitingRequests: Sendable {
    enum Outcome: Sendable, Equatable {
        case ready
        case timedOut
        case tooMany
        case stopped
    }

    private struct Waiter {
        let position: HLSSnapshot.Position
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var waiters: [Waiter] = []
        var stopped = false
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(0, limit) }

    var count: Int { state.withLock { $0.waiters.count } }

    /// Waits until `isOut(position)` holds (checked now, and again whenever ``published(_:)`` is called), for at
    /// most `timeout`.
    func wait(for position: HLSSnapshot.Position, timeout: Duration, isOut: (HLSSnapshot.Position) -> Bool) async -> Outcome {
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let immediate: Outcome? = state.withLock { state in
                if state.stopped { return .stopped }
                // Checked under this lock: a part published meanwhile resumes the waiter after it is added.
                if isOut(position) { return .ready }
                if state.waiters.count >= limit { return .tooMany }
                state.waiters.append(Waiter(position: position, deadline: .now + timeout, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Ends the waits whose deadline has passed.
    func expire(now: ContinuousClock.Instant) {
        for waiter in remove(where: { $0.deadline <= now }) { waiter.continuation.resume(returning: .timedOut) }
    }

    /// What the snapshot now holds: the waiters it satisfies go on.
    func published(_ snapshot: HLSSnapshot) {
        for waiter in remove(where: { snapshot.holds($0.position) }) { waiter.continuation.resume(returning: .ready) }
    }

    private func remove(where matches: (Waiter) -> Bool) -> [Waiter] {
        state.withLock { state in
            guard state.waiters.contains(where: matches) else { return [] }
            let gone = state.waiters.filter(matches)
            state.waiters.removeAll(where: matches)
            return gone
        }
    }

    /// HLS stops: every waiter goes on, and later ones are answered at once.
    func stop() {
        let all = state.withLock { state -> [Waiter] in
            state.stopped = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in all { waiter.continuation.resume(returning: .stopped) }
    }
}
