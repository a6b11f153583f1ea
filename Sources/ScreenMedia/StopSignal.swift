import Synchronization

/// A thread-safe one-way flag that asks a running capture loop or pipeline to finish.
public final class StopSignal: Sendable {
    private let stopped = Atomic<Bool>(false)

    public init() {}

    public func stop() { stopped.store(true, ordering: .releasing) }

    public var isStopped: Bool { stopped.load(ordering: .acquiring) }
}
