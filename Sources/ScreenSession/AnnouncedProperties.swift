import ScreenMedia

/// What a relay publisher's stream says of itself (`publish`, then `streamPropertyChanged`): its sound, whether
/// video and sound are on (pause, mute), its frame rate, and its capture delays as measured. Each change counts a
/// revision, so that the sender announces again after it. Pure.
struct AnnouncedProperties: Sendable {
    /// The stream's sound as announced (nil: none).
    let audio: AudioProperties?
    /// False while the share is paused (the stream's `hasVideo`); false while muted.
    private(set) var videoEnabled = true
    private(set) var audioEnabled = true
    private(set) var framesPerSecond: Double
    /// Counts changes of the announced properties.
    private(set) var revision = 0
    /// Capture tick → encoded frame in hand, smoothed, for video and sound: the stream's estimated capture delays.
    private var captureDelayMilliseconds: Double?
    private var audioCaptureDelayMilliseconds: Double?

    /// A new measure's weight in the smoothed capture delays.
    static var delaySampleWeight: Double { 0.1 }

    init(framesPerSecond: Double, audio: AudioProperties?) {
        self.framesPerSecond = framesPerSecond
        self.audio = audio
    }

    mutating func setVideoEnabled(_ enabled: Bool) { change { $0.videoEnabled = enabled } }
    mutating func setAudioEnabled(_ enabled: Bool) { change { $0.audioEnabled = enabled } }
    mutating func setFramesPerSecond(_ rate: Double) { change { $0.framesPerSecond = rate } }

    private mutating func change(_ body: (inout Self) -> Void) {
        body(&self)
        revision += 1
    }

    /// A video (or, `audio`, sound) frame was in hand this many milliseconds after its capture.
    mutating func noteCaptureDelay(_ milliseconds: Double, audio: Bool = false) {
        guard milliseconds.isFinite else { return }
        func smoothed(_ old: Double?) -> Double { old.map { (1 - Self.delaySampleWeight) * $0 + Self.delaySampleWeight * milliseconds } ?? milliseconds }
        if audio { audioCaptureDelayMilliseconds = smoothed(audioCaptureDelayMilliseconds) } else { captureDelayMilliseconds = smoothed(captureDelayMilliseconds) }
    }

    /// The properties the stream is published with, at its first frame (codec, size and the codec string from its
    /// keyframe's bytes).
    func properties(codec: VideoCodec, width: Int, height: Int, keyframe: [UInt8]) -> StreamProperties {
        var audio = audio
        audio?.estimatedCaptureDelayMilliseconds = Self.tenths(audioCaptureDelayMilliseconds)
        return StreamProperties(
            videoType: .screen, codec: codec, width: width, height: height, estimatedFramesPerSecond: framesPerSecond,
            estimatedCaptureDelayMilliseconds: Self.tenths(captureDelayMilliseconds),
            hasVideo: videoEnabled, audio: audio, hasAudio: audioEnabled && videoEnabled,
            codecString: StreamProperties.codecString(codec, keyframe: keyframe, width: width, height: height, framesPerSecond: framesPerSecond))
    }

    /// `published` as it is now (pause, mute, frame rate).
    func updated(_ published: StreamProperties) -> StreamProperties {
        var properties = published
        properties.hasVideo = videoEnabled
        properties.hasAudio = audioEnabled && videoEnabled
        properties.estimatedFramesPerSecond = framesPerSecond
        return properties
    }

    private static func tenths(_ milliseconds: Double?) -> Double { ((milliseconds ?? 0) * 10).rounded() / 10 }
}
