#if canImport(Glibc)
import Glibc
#endif
import NIOCore
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

    /// The relay stopped, or never listened: whoever waits learns that the port will not come. True when it never
    /// listened.
    @discardableResult
    func failed(_ failure: RelayError) -> Bool {
        let (waiters, neverOpened) = state.withLock { state in
            if state.port == nil { state.failure = failure.message }
            defer { state.waiters = [] }
            return (state.waiters, state.port == nil)
        }
        for waiter in waiters { waiter.resume(throwing: failure) }
        return neverOpened
    }

    /// Why a relay cannot listen on `host`:`port`, as what to change: a port another program holds, an address that
    /// is not this machine's, a privileged port; else the error as it describes itself.
    static func reason(_ error: any Error, host: String, port: Int) -> String {
        let described = String(describing: error)
        let code = (error as? IOError)?.errnoCode
        func says(_ errno: Int32) -> Bool { code == errno || described.contains("(errno: \(errno))") }
        if says(EADDRINUSE) {
            return "cannot listen on \(host):\(port): another program listens there already (address in use); stop it, or give another port (--port)"
        }
        if says(EADDRNOTAVAIL) {
            return "cannot listen on \(host):\(port): \(host) is not an address of this machine; give one of its own (--host), or 0.0.0.0 for all"
        }
        if says(EACCES) {
            return "cannot listen on \(host):\(port): a port under 1024 needs root or CAP_NET_BIND_SERVICE; give a port of 1024 or more (--port)"
        }
        return "cannot listen on \(host):\(port): \(described)"
    }
}
