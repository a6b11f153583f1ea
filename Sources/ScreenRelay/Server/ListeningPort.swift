import ScreenMedia

/// The port the relay listens on, once it does, for whoever waits for it (the links the relay gives out name it),
/// or why it never will.
final class ListeningPort: Sendable {
    private let state = Locked<(port: Int?, failure: String?, waiters: [CheckedContinuation<Int, any Error>])>((nil, nil, []))

    /// The port, once the relay listens; throws ``RelayError`` (`.cannotListen`) if it never will.
    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let known = state.withLock { state -> Result<Int, RelayError>? in
                if let port = state.port { return .success(port) }
                if let failure = state.failure { return .failure(RelayError(.cannotListen, failure)) }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(with: known) }
        }
    }

    /// The relay listens on `port`: whoever waits learns it.
    func opened(_ port: Int) {
        let waiters = state.withLock { state in
            state.port = port
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    /// The relay stopped, or never listened: whoever waits learns that the port will not come.
    func failed(_ failure: RelayError) {
        let waiters = state.withLock { state in
            if state.port == nil { state.failure = failure.message }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: failure) }
    }
}
