extension StreamRouter {
    public typealias Limits = RouterLimits
}

/// What one session's router allows each client, stream and subscriber: every bound on what a client can make
/// the relay hold or do, in one place (the relay's configuration and command-line options start from these).
public struct RouterLimits: Sendable {
    /// A subscriber's queued media, in milliseconds at its measured drain rate, past which its highest
    /// temporal layer is lowered (one step at a time, at most every ``thinStepSeconds``).
    public var thinAboveMilliseconds: Double
    public var thinStepSeconds: Double
    /// Under this for ``raiseAfterSeconds``, its highest layer goes up one step.
    public var raiseBelowMilliseconds: Double
    public var raiseAfterSeconds: Double
    /// A frame is not sent to a subscriber with this much queued (milliseconds at its drain rate, or bytes):
    /// a higher layer's is thinned, a layer-0 frame makes it skip to the next keyframe.
    public var maximumQueuedMilliseconds: Double
    public var maximumQueuedBytes: Int
    /// A discardable frame above a subscriber's layers is still sent when its link would carry it, behind what
    /// is queued, within this many milliseconds (and before the next layer-0 frame is due).
    public var fitInMilliseconds: Double
    /// Audio frames (20 ms each) a subscriber may have in flight before the next ones are dropped.
    public var maximumQueuedAudioFrames: Int
    /// The stream's ceiling: at most one keyframe request to its publisher per this many seconds.
    public var keyframeRequestInterval: Double
    /// One subscriber's ceiling: it makes the publisher send a keyframe at most once per this many seconds.
    public var subscriberKeyframeIntervalSeconds: Double
    /// The stream's ceiling for keyframes asked on subscribers' behalf (a joiner the cache cannot start, one
    /// that fell behind, one whose decoder failed): at most one per this many seconds after the stream's last
    /// keyframe or such request, so that no subscriber makes every other pay for a keyframe more often. 30 s:
    /// at most 2 a minute, about 60 KB each for a 1080p AV1 text page (2 s of a 250 kbit/s viewer's link).
    /// Keyframes the relay asks for itself (a recording starts, an HLS segment) are not under it.
    public var subscriberKeyframeCeilingSeconds: Double
    /// One subscriber's own requests (`requestKeyframe`) served per window; past them they wait, merged, and
    /// a subscriber that made ``ignoredKeyframeRequestsBeforeClose`` with none served is closed.
    public var keyframeRequestsPerSubscriber: Int
    public var keyframeRequestWindowSeconds: Double
    public var ignoredKeyframeRequestsBeforeClose: Int
    /// A subscriber that takes none of its queued media for this long is closed (`tooSlow`).
    public var stallSeconds: Double
    /// The cached group of pictures is dropped past this many bytes (and a keyframe is asked for the next
    /// subscriber instead), which bounds the relay's memory per stream.
    public var maximumCachedBytes: Int
    /// Signals one connection may send per second, on average, and at once: past them a signal is refused
    /// (`invalidSignal`), so that one client cannot flood everyone's queue through the session.
    public var signalsPerSecond: Double
    public var signalBurst: Double
    /// All the session's connections together: each signal goes to everyone, so this bounds what many
    /// connections of one token could make the relay deliver (twice as many at once).
    public var sessionSignalsPerSecond: Double
    /// Streams one connection may publish at once, and the longest name (bytes): what every joiner's
    /// welcome carries stays small.
    public var maximumStreamsPerConnection: Int
    public var maximumStreamNameBytes: Int
    /// Streams a session holds at once, whoever publishes them: with the connections a joiner is told of
    /// (at most ``welcomeConnectionBytes`` of them), every `welcome` stays under the 64 KiB a control message
    /// may have.
    public var maximumStreamsPerSession: Int
    /// Video frames one stream may send per second (a burst of twice as many): twice screenpub's highest
    /// rate (120 fps). Audio frames: ``maximumAudioFramesPerSecond`` (Opus sends 50 a second). Past them
    /// frames are refused (`frame_rate`).
    public var maximumFramesPerSecond: Double
    public var maximumAudioFramesPerSecond: Double
    /// What one token's connections may do together, and the session's connections (``TokenShares``).
    public var tokenShares = TokenShares.Limits()
    /// How often one connection, and one token's connections together, may change their subscriptions and streams
    /// and join (``ControlRates``).
    var controlRates = ControlRates.Limits()

    public init(
        thinAboveMilliseconds: Double = 300, thinStepSeconds: Double = 0.5, raiseBelowMilliseconds: Double = 100,
        raiseAfterSeconds: Double = 3, maximumQueuedMilliseconds: Double = 2000, maximumQueuedBytes: Int = 4 << 20,
        fitInMilliseconds: Double = 1000,
        maximumQueuedAudioFrames: Int = 10, keyframeRequestInterval: Double = 0.5, subscriberKeyframeIntervalSeconds: Double = 4,
        subscriberKeyframeCeilingSeconds: Double = 30, keyframeRequestsPerSubscriber: Int = 3, keyframeRequestWindowSeconds: Double = 10,
        ignoredKeyframeRequestsBeforeClose: Int = 40,
        stallSeconds: Double = 20, maximumCachedBytes: Int = 8 << 20, signalsPerSecond: Double = 20, signalBurst: Double = 40,
        maximumStreamsPerConnection: Int = 16, maximumStreamNameBytes: Int = 256, maximumStreamsPerSession: Int = 32,
        maximumFramesPerSecond: Double = 240, maximumAudioFramesPerSecond: Double = 200, sessionSignalsPerSecond: Double = 50
    ) {
        self.sessionSignalsPerSecond = sessionSignalsPerSecond
        self.maximumStreamsPerSession = maximumStreamsPerSession
        self.maximumFramesPerSecond = maximumFramesPerSecond
        self.maximumAudioFramesPerSecond = maximumAudioFramesPerSecond
        self.thinAboveMilliseconds = thinAboveMilliseconds
        self.thinStepSeconds = thinStepSeconds
        self.raiseBelowMilliseconds = raiseBelowMilliseconds
        self.raiseAfterSeconds = raiseAfterSeconds
        self.maximumQueuedMilliseconds = maximumQueuedMilliseconds
        self.maximumQueuedBytes = maximumQueuedBytes
        self.fitInMilliseconds = fitInMilliseconds
        self.maximumQueuedAudioFrames = maximumQueuedAudioFrames
        self.keyframeRequestInterval = keyframeRequestInterval
        self.subscriberKeyframeIntervalSeconds = subscriberKeyframeIntervalSeconds
        self.subscriberKeyframeCeilingSeconds = subscriberKeyframeCeilingSeconds
        self.keyframeRequestsPerSubscriber = keyframeRequestsPerSubscriber
        self.keyframeRequestWindowSeconds = keyframeRequestWindowSeconds
        self.ignoredKeyframeRequestsBeforeClose = ignoredKeyframeRequestsBeforeClose
        self.stallSeconds = stallSeconds
        self.maximumCachedBytes = maximumCachedBytes
        self.signalsPerSecond = signalsPerSecond
        self.signalBurst = signalBurst
        self.maximumStreamsPerConnection = maximumStreamsPerConnection
        self.maximumStreamNameBytes = maximumStreamNameBytes
    }
}
