public import ScreenMedia

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

    /// Where the share's second rendition goes, for a destination that asks for one (a relay); nil for the others.
    func makeRenditionSink() -> (any EncodedFrameSink)?

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
    public func makeRenditionSink() -> (any EncodedFrameSink)? { nil }
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
