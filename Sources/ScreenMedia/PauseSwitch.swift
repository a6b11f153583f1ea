import Synchronization

/// Whether the share is paused: set from anywhere (the control socket), read by the capture thread every tick.
public final class PauseSwitch: Sendable {
    private let paused = Atomic<Bool>(false)

    public init() {}

    public var isPaused: Bool { paused.load(ordering: .acquiring) }
    public func set(paused value: Bool) { paused.store(value, ordering: .releasing) }
}
