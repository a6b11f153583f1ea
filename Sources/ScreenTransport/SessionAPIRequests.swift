/// The session API's request bodies (docs/protocol.md), one type each, written by the client (`screenrelay`'s
/// admin commands, screenpub) and read by the relay: what one sends is what the other decodes.

/// `POST /session`: a new session, with a title and (for its first token) data.
public struct SessionRequest: Sendable, Codable, Equatable {
    public var title: String?
    public var data: String?

    public init(title: String? = nil, data: String? = nil) {
        self.title = title
        self.data = data
    }
}

/// `POST /session/{id}/token`: a token for the session. The role is a string the relay checks by hand, so that
/// a wrong one is answered with a sentence rather than a decoding error.
public struct TokenRequest: Sendable, Codable, Equatable {
    public var role: String?
    public var expiresIn: Double?
    public var data: String?

    public init(role: String? = nil, expiresIn: Double? = nil, data: String? = nil) {
        self.role = role
        self.expiresIn = expiresIn
        self.data = data
    }
}

/// `POST /archive`: start recording a session.
public struct ArchiveStartRequest: Sendable, Codable, Equatable {
    public var sessionId: String
    public var name: String?

    public init(sessionId: String, name: String? = nil) {
        self.sessionId = sessionId
        self.name = name
    }
}
