import Foundation
import ScreenMedia

/// What `body` returns if it returns within `seconds`; nil if it does not (it is then cancelled and left to end on
/// its own: a test that must not hang reports what got stuck, rather than waiting for it).
public func within<Value: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> Value) async -> Value? {
    let work = Task { await body() }
    let answered = Locked(false)
    let value: Value? = await withCheckedContinuation { continuation in
        @Sendable func answer(_ value: Value?) {
            let first = answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
            if first { continuation.resume(returning: value) }
        }
        Task { answer(await work.value) }
        Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            answer(nil)
        }
    }
    if value == nil { work.cancel() }
    return value
}
