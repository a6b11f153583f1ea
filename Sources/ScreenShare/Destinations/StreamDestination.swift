public import Logging
public import ScreenMedia
public import ScreenWire
public import ScreenTransportClient

/// A place a screen stream goes: a relay (over a WebSocket or in this process), a WebM file, and whatever
/// comes next (WHIP into an SFU, HLS push). A share sends to several at once.
///
/// The capture thread writes encoded frames into the destination's ``makeSink()``; anything slow (a network
/// connection) runs in ``run()`` on a task of its own and must never make the sink's `write` wait.
public protocol StreamDestination: Sendable {
    /// Where the stream goes, for logs and `screenpub status` (a URL or a path).
    var endpoint: String { get }

    /// The sink the capture thread writes into. Called on the capture thread, once, when the share starts;
    /// throws (with a message a user can act on) when the destination cannot take the stream.
    func makeSink() throws -> any EncodedFrameSink

    /// The destination's own work (a connection to keep up) until the sink is finished; returns then.
    /// Throws when the destination fails for good (a refused token); the share then ends.
    func run() async throws

    /// The share was paused or resumed, or its frame rate changed: tell the viewers.
    func announce(_ announcement: StreamAnnouncement)

    /// What `screenpub status` shows of this destination.
    var status: DestinationStatus { get }

    /// Lines printed on standard output once the share has started (a session's URLs, which scripts read);
    /// may wait until the destination knows them.
    func startupMessage() async throws -> String?
}

extension StreamDestination {
    public func run() async throws {}
    public func announce(_ announcement: StreamAnnouncement) {}
    public func startupMessage() async throws -> String? { nil }
}

/// What a share tells its destinations about the stream besides its frames.
public struct StreamAnnouncement: Sendable, Equatable {
    /// False while the share is paused (viewers keep the last picture and show that it is paused).
    public var hasVideo: Bool
    public var framesPerSecond: Double
    /// False while the sound is muted (`screenpub mute`) or the share paused.
    public var hasAudio: Bool

    public init(hasVideo: Bool, framesPerSecond: Double, hasAudio: Bool = true) {
        self.hasVideo = hasVideo
        self.framesPerSecond = framesPerSecond
        self.hasAudio = hasAudio
    }
}

/// One destination's state, as `screenpub status --json` reports it (docs/protocol.md, "Control socket").
public struct DestinationStatus: Codable, Sendable, Equatable {
    /// What the destination is: a relay, a file, WHIP, or a new kind's own word (a string in JSON).
    public struct Kind: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let relay = Kind(rawValue: "relay")
        public static let file = Kind(rawValue: "file")
        public static let whip = Kind(rawValue: "whip")
        public var description: String { rawValue }
    }

    public var kind: Kind
    public var endpoint: String
    /// For connections: connected now, and whether ever since the share started.
    public var connected: Bool?
    public var everConnected: Bool?
    /// The last connection problem, cleared on connecting.
    public var lastProblem: String?
    public var sessionId: String?
    public var streamId: Int?
    public var viewerURL: String?
    /// Other connections in the session (viewers, screensub, moderators).
    public var viewers: Int?
    /// For WebRTC: frames handed to the connection, and keyframe requests (PLI/FIR) from its receivers.
    public var framesSent: Int?
    public var keyframeRequests: Int?
    /// For a relay that acknowledges frames: the encoder target it asks for, what its uplink was measured to
    /// carry (kbit/s), and why the target is what it is.
    public var targetKbps: Int?
    public var uplinkKbps: Int?
    public var rateReason: String?
    /// Encoded frames dropped on the way to it (its queue's time bound).
    public var framesDropped: Int?

    public init(
        kind: Kind, endpoint: String, connected: Bool? = nil, everConnected: Bool? = nil, lastProblem: String? = nil,
        sessionId: String? = nil, streamId: Int? = nil, viewerURL: String? = nil, viewers: Int? = nil, framesSent: Int? = nil,
        keyframeRequests: Int? = nil
    ) {
        self.kind = kind
        self.endpoint = endpoint
        self.connected = connected
        self.everConnected = everConnected
        self.lastProblem = lastProblem
        self.sessionId = sessionId
        self.streamId = streamId
        self.viewerURL = viewerURL
        self.viewers = viewers
        self.framesSent = framesSent
        self.keyframeRequests = keyframeRequests
    }
}

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
        framesPerSecond: Double, videoCodec: VideoCodec? = nil, audio: AudioProperties? = nil,
        audioPreSkip: Int = 312,
        options: DestinationOptions = DestinationOptions(),
        environment: [String: String] = [:], onSignal: @escaping @Sendable (Signal) -> Void = { _ in }, logger: Logger
    ) {
        self.pictureRequests = pictureRequests
        self.pacing = pacing
        self.bitrateKbps = bitrateKbps
        self.framesPerSecond = framesPerSecond
        self.videoCodec = videoCodec
        self.audio = audio
        self.audioPreSkip = audioPreSkip
        self.options = options
        self.environment = environment
        self.onSignal = onSignal
        self.logger = logger
    }
}

/// The command line's options for destinations.
public struct DestinationOptions: Sendable, Equatable {
    /// A publisher token for a relay (else a session is made with the relay secret).
    public var token: String?
    /// Reconnect to a relay with backoff when it cannot be reached or the connection drops.
    public var reconnect: Bool
    /// Replace an existing file.
    public var overwrite: Bool
    /// Whom to trust for an `https://` or `wss://` relay's certificate.
    public var trust: ClientTrust
    /// The bearer token a WHIP endpoint expects.
    public var whipToken: String?

    public init(token: String? = nil, reconnect: Bool = true, overwrite: Bool = false, trust: ClientTrust = .system, whipToken: String? = nil) {
        self.token = token
        self.reconnect = reconnect
        self.overwrite = overwrite
        self.trust = trust
        self.whipToken = whipToken
    }
}

/// How one kind of destination is made from its URL: a new kind is one such value in the share's list.
public struct DestinationKind: Sendable {
    /// What it is, as its destinations' status says.
    public var name: DestinationStatus.Kind
    /// The URL schemes it takes (`ws`, `file`); a plain path counts as `file`.
    public var schemes: [String]
    /// Makes the destination; may talk to the network (to make a session). Throws a message a user can act on.
    public var make: @Sendable (_ url: String, _ context: DestinationContext) async throws -> any StreamDestination

    public init(
        _ name: DestinationStatus.Kind, schemes: [String],
        make: @escaping @Sendable (_ url: String, _ context: DestinationContext) async throws -> any StreamDestination
    ) {
        self.name = name
        self.schemes = schemes
        self.make = make
    }

    /// The scheme of `url` (`file` for a path without one), lowercased.
    public static func scheme(of url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
            url[..<colon].first?.isLetter == true, url[..<colon].count > 1
        else { return "file" }
        return url[..<colon].lowercased()
    }
}
