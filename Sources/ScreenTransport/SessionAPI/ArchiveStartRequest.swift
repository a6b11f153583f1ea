/// `POST /archive`: start recording a session.
public struct ArchiveStartRequest: Sendable, Codable, Equatable {
    public var sessionId: String
    public var name: String?

    public init(sessionId: String, name: String? = nil) {
        self.sessionId = sessionId
        self.name = name
    }
}
