import Synchronization

/// A value behind a lock, as a reference that closures and tasks can share (a `Mutex` cannot be captured).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }

    /// The current value.
    public var value: Value { mutex.withLock { $0 } }
}
