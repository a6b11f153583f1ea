/// What a session's router counted: frames it did not send and why, keyframes it asked for, subscribers it
/// evicted or caught up, and what its limits refused. The relay folds them into its metrics as they change
/// (`RelayMetrics.fold(_:since:)`, outside the router: the router imports no metrics library).
public struct RouterCounters: Equatable, Sendable {
    /// Frames not sent to a subscriber because it was too far behind or waiting for a keyframe.
    public var droppedFrames = 0
    /// Audio frames not sent to a subscriber because it was too far behind.
    public var droppedAudioFrames = 0
    /// Keyframe requests sent to publishers, and why.
    public var keyframeRequestsSent = 0
    public var keyframeRequestsByCause: [KeyframeCause: Int] = [:]
    /// Video frames not sent to a subscriber because its link could not carry their layer (it still got the
    /// lower layers).
    public var thinnedFrames = 0
    /// Video frames above a subscriber's layers sent to it all the same, because its link had room for them.
    public var fittedInFrames = 0
    /// Subscribers closed because they took nothing of their queue for ``RouterLimits/stallSeconds``.
    public var evictedSubscribers = 0
    /// Subscribers brought to the newest picture from the cache: by the frames they missed, or from its keyframe.
    public var catchUpsContinued = 0
    public var catchUpsFromKeyframe = 0
    /// Renditions asked of publishers (``RenditionBook``), and stopped for want of viewers.
    public var renditionsAsked = 0
    public var renditionsStopped = 0
    /// What the router's limits refused, by limit.
    public var refused: [RelayLimit: Int] = [:]

    public init() {}
}
