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
