/// The session API's request bodies (docs/protocol.md) are written by the client (`screenrelay`'s admin commands,
/// screenpub) and read by the relay: what one sends is what the other decodes.

/// `POST /session`: a new session, with a title and (for its first token) data.
public struct SessionRequest: Sendable, Codable, Equatable {
    public var title: String?
    public var data: String?

    public init(title: String? = nil, data: String? = nil) {
        self.title = title
        self.data = data
    }
}
