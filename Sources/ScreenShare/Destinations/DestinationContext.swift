public import Logging
public import ScreenMedia
public import ScreenWire

/// What every destination is made with: the share's shared keyframe flag (any destination may ask the
/// encoder for a keyframe through it), its settings and its log.
public struct DestinationContext: Sendable {
    /// Set by a destination whose receivers need a picture to start from; the encoder serves it next tick.
    public var pictureRequests: PictureRequests
    /// Where a destination that follows its network tells the encoder its rate and when to hold frames back
    /// (a voice of its own).
    public var pacing: EncoderPacing
    /// The configured bit rate (`--bitrate`), kbit/s: what a destination that adapts never goes above.
    public var bitrateKbps: Int
    public var framesPerSecond: Double
    /// The codec the share encodes with (nil where unknown): a destination that can carry only some refuses others.
    public var videoCodec: VideoCodec?
    /// The share's second rendition, which a relay destination asks for while its viewers need it; nil where the
    /// share makes none (``Share/renditionCodec(for:)``).
    public var renditions: (requests: RenditionRequests, codec: VideoCodec)?
    /// The share's sound (nil: none): destinations that carry it announce it and take its frames through their
    /// sink's ``EncodedAudioSink`` side.
    public var audio: AudioProperties?
    /// The Opus encoder's lookahead in samples (a file's pre-skip).
    public var audioPreSkip: Int
    /// Options the command line gives every destination; each reads those it understands.
    public var options: DestinationOptions
    /// The environment the share runs in (a relay secret is read from it, never from the process globally).
    public var environment: [String: String]
    /// Signals (chat) from a destination's receivers.
    public var onSignal: @Sendable (Signal) -> Void
    public var logger: Logger

    public init(
        pictureRequests: PictureRequests, pacing: EncoderPacing = EncoderPacing(), bitrateKbps: Int = 1000,
        framesPerSecond: Double, videoCodec: VideoCodec? = nil, renditions: (requests: RenditionRequests, codec: VideoCodec)? = nil,
        audio: AudioProperties? = nil,
        audioPreSkip: Int = 312,
        options: DestinationOptions = DestinationOptions(),
        environment: [String: String] = [:], onSignal: @escaping @Sendable (Signal) -> Void = { _ in }, logger: Logger
    ) {
        self.pictureRequests = pictureRequests
        self.pacing = pacing
        self.bitrateKbps = bitrateKbps
        self.framesPerSecond = framesPerSecond
        self.videoCodec = videoCodec
        self.renditions = renditions
        self.audio = audio
        self.audioPreSkip = audioPreSkip
        self.options = options
        self.environment = environment
        self.onSignal = onSignal
        self.logger = logger
    }
}
