import Synchronization

/// Whether the share's sound is muted (`screenpub mute`): set from anywhere, read by the audio thread.
public final class MuteSwitch: Sendable {
    private let muted = Atomic<Bool>(false)

    public init() {}

    public var isMuted: Bool { muted.load(ordering: .acquiring) }
    public func set(muted value: Bool) { muted.store(value, ordering: .releasing) }
}
