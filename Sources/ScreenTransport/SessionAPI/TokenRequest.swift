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
