/// A client connected to the session, with the connection data of its token.
public struct ConnectionInfo: Sendable, Hashable, Codable {
    public var connectionId: String
    public var role: Role
    public var data: String

    public init(connectionId: String, role: Role, data: String) {
        self.connectionId = connectionId
        self.role = role
        self.data = data
    }
}
