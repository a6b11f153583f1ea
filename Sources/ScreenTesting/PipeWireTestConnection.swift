import CPipeWire
import Foundation

/// A test client's own connection to a ``PrivatePipeWire``: a `pw_thread_loop` running its callbacks, a context
/// and a core, made and torn down in that order — what ``PipeWireTestProducer`` and ``PipeWireTestTone`` stand on.
final class PipeWireTestConnection {
    let threadLoop: OpaquePointer
    let context: OpaquePointer
    let core: OpaquePointer

    private static let initialized: Void = { pw_init(nil, nil) }()

    /// Connects to `pipewire` with a loop thread called `name`; `who` names the client in errors.
    init(to pipewire: PrivatePipeWire, name: String, who: String) throws {
        let descriptor = try pipewire.connect()
        _ = Self.initialized
        guard let threadLoop = pw_thread_loop_new(name, nil) else { throw PrivatePipeWire.Failure(description: "pw_thread_loop_new failed") }
        guard let context = pw_context_new(pw_thread_loop_get_loop(threadLoop), nil, 0) else {
            pw_thread_loop_destroy(threadLoop)
            throw PrivatePipeWire.Failure(description: "pw_context_new failed")
        }
        guard pw_thread_loop_start(threadLoop) == 0 else {
            pw_context_destroy(context)
            pw_thread_loop_destroy(threadLoop)
            throw PrivatePipeWire.Failure(description: "pw_thread_loop_start failed")
        }
        pw_thread_loop_lock(threadLoop)
        let core = pw_context_connect_fd(context, descriptor, nil, 0)
        pw_thread_loop_unlock(threadLoop)
        guard let core else {
            pw_thread_loop_stop(threadLoop)
            pw_context_destroy(context)
            pw_thread_loop_destroy(threadLoop)
            throw PrivatePipeWire.Failure(description: "\(who) cannot connect to PipeWire: errno \(errno)")
        }
        (self.threadLoop, self.context, self.core) = (threadLoop, context, core)
    }

    /// Runs `body` with the loop locked (its callbacks do not run meanwhile).
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pw_thread_loop_lock(threadLoop)
        defer { pw_thread_loop_unlock(threadLoop) }
        return try body()
    }

    /// Ends the loop's thread and disconnects (after the client has destroyed its streams). Once only.
    func close() {
        pw_thread_loop_stop(threadLoop)
        pw_core_disconnect(core)
        pw_context_destroy(context)
        pw_thread_loop_destroy(threadLoop)
    }
}
