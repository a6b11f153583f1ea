public import ScreenWire

/// What `POST /session/{id}/token` answers.
public struct TokenMinted: Sendable, Codable, Equatable {
    public var sessionId: String
    public var token: String
    public var role: Role
    public var expiresAt: String
    /// The viewer page with this token, for subscribers and moderators (a publisher's token goes to screenpub).
    public var viewerURL: String?

    public init(sessionId: String, token: String, role: Role, expiresAt: String, viewerURL: String?) {
        self.sessionId = sessionId
        self.token = token
        self.role = role
        self.expiresAt = expiresAt
        self.viewerURL = viewerURL
    }
}
