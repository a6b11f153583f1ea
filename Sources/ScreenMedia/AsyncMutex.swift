import Synchronization

/// Mutual exclusion across suspension points: one task at a time runs its body, the others wait their turn
/// in order (an actor would let another call in while the body is suspended).
public final class AsyncMutex: Sendable {
    private let state = Mutex<(held: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func withLock<Result: Sendable>(_ body: () async throws -> Result) async rethrows -> Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let acquired = state.withLock { state in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter, if any (it stays held), else frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
