import Synchronization

/// Something that happens once (a stream finished), awaited by tasks that must not poll for it.
public final class OneShotEvent: Sendable {
    private let state = Mutex<(happened: Bool, waiters: [UInt64: CheckedContinuation<Void, Never>], nextId: UInt64)>((false, [:], 0))

    public init() {}

    /// Marks it happened and wakes every waiter; later waits return at once.
    public func signal() {
        let waiters = state.withLock { state in
            state.happened = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when it has happened, after `timeout`, or when the task is cancelled, whichever comes first.
    public func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when it has happened or the task is cancelled.
    public func wait() async {
        let id = state.withLock { state in
            defer { state.nextId += 1 }
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let happened = state.withLock { state in
                    if state.happened || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if happened { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
