/// A participant's role, carried in its token.
public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
    /// May publish streams and subscribe.
    case publisher
    /// May subscribe only.
    case subscriber
    /// May do everything, including archiving and forcing disconnects.
    case moderator

    public var mayPublish: Bool { self != .subscriber }
}
