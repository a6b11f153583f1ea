/// A new session's credentials, as `POST /session` answers (the seed's credentials endpoint): a publisher
/// token, the WebSocket URL and a viewer URL carrying a subscriber token. Both sides read it: the relay writes
/// it, screenpub prints it and publishes with it.
public struct SessionCredentials: Codable, Sendable, Equatable {
    public var sessionId: String
    public var token: String
    public var relayURL: String
    public var viewerURL: String

    public init(sessionId: String, token: String, relayURL: String, viewerURL: String) {
        self.sessionId = sessionId
        self.token = token
        self.relayURL = relayURL
        self.viewerURL = viewerURL
    }

    /// What screenpub prints about a session it made: scripts read these lines.
    public var announcement: String {
        "session: \(sessionId)\nrelay:   \(relayURL)\nviewer:  \(viewerURL)"
    }
}
