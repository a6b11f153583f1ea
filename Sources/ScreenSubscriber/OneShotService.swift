import ScreenMedia
import ServiceLifecycle

/// A Service that runs a body once, cancelled by the group's graceful shutdown, and keeps what it returned or
/// threw for whoever ran the group.
final class OneShotService<Value: Sendable>: Service {
    private let body: @Sendable () async throws -> Value
    private let result = Locked<Result<Value, any Error>?>(nil)

    init(_ body: @escaping @Sendable () async throws -> Value) { self.body = body }

    func run() async {
        let body = body
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await cancelWhenGracefulShutdown { try await body() })
        } catch {
            outcome = .failure(error)
        }
        result.withLock { $0 = outcome }
    }

    /// What the body returned or threw; CancellationError when it never ran.
    func outcome() throws -> Value {
        guard let outcome = result.value else { throw CancellationError() }
        return try outcome.get()
    }
}
