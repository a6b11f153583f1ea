import Synchronization

/// Requests for a picture from another thread (a relay connection, a WHIP session) to the capture thread's
/// encoder: a keyframe (someone needs a picture to start from), or a refresh (someone needs a frame now, any
/// kind: an HLS part is due on an idle screen, and the unchanged picture re-sent as a delta costs a few bytes).
public final class PictureRequests: Sendable {
    private let keyframe = Atomic<Bool>(false)
    private let refresh = Atomic<Bool>(false)

    public init() {}

    /// Asks for the next frame to be a keyframe, even if the screen is idle.
    public func requestKeyframe() { keyframe.store(true, ordering: .releasing) }

    /// Whether a keyframe was asked for since the last call; clears the request.
    public func takeKeyframe() -> Bool { keyframe.exchange(false, ordering: .acquiring) }

    /// Asks for a frame on the next tick, even if the screen is idle (a keepalive, sent early).
    public func requestRefresh() { refresh.store(true, ordering: .releasing) }

    /// Whether a frame was asked for since the last call; clears the request.
    public func takeRefresh() -> Bool { refresh.exchange(false, ordering: .acquiring) }
}
