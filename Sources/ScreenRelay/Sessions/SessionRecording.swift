/// A session's recording in progress, if any, and its end when the session is left without a stream: once no
/// stream has been published for the grace period (the publisher left), `onIdle` stops it; a stream published
/// again meanwhile cancels the countdown. The hub tells it the session's stream count each time that changes
/// (``streamsChanged(to:)``).
struct SessionRecording {
    private(set) var recorder: ArchiveRecorder?
    private(set) var name = ""
    private var onIdle: (@Sendable () async -> Void)?
    private var idleTimer: Task<Void, Never>?
    private let grace: Duration

    init(grace: Duration) { self.grace = grace }

    mutating func attach(_ recorder: ArchiveRecorder, name: String, onIdle: @escaping @Sendable () async -> Void, streams: Int) {
        self.recorder = recorder
        self.name = name
        self.onIdle = onIdle
        streamsChanged(to: streams)
    }

    /// Ends it: the recorder it had, if any.
    mutating func detach() -> ArchiveRecorder? {
        defer {
            recorder = nil
            onIdle = nil
            idleTimer?.cancel()
            idleTimer = nil
        }
        return recorder
    }

    /// The session now has `count` streams: with none, the countdown starts; with one, it is cancelled.
    mutating func streamsChanged(to count: Int) {
        guard let onIdle else { return }
        if count == 0 {
            guard idleTimer == nil else { return }
            let grace = grace
            idleTimer = Task {
                try? await Task.sleep(for: grace)
                if !Task.isCancelled { await onIdle() }
            }
        } else {
            idleTimer?.cancel()
            idleTimer = nil
        }
    }
}
