/// How one kind of destination is made from its URL: a new kind is one such value in the share's list.
public struct DestinationKind: Sendable {
    /// What it is, as its destinations' status says.
    public var name: DestinationStatus.Kind
    /// The URL schemes it takes (`ws`, `file`); a plain path counts as `file`.
    public var schemes: [String]
    /// Makes the destination; may talk to the network (to make a session). Throws a message a user can act on.
    public var make: @Sendable (_ url: String, _ context: DestinationContext) async throws -> any StreamDestination

    public init(
        _ name: DestinationStatus.Kind, schemes: [String],
        make: @escaping @Sendable (_ url: String, _ context: DestinationContext) async throws -> any StreamDestination
    ) {
        self.name = name
        self.schemes = schemes
        self.make = make
    }

    /// The scheme of `url` (`file` for a path without one), lowercased.
    public static func scheme(of url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
            url[..<colon].first?.isLetter == true, url[..<colon].count > 1
        else { return "file" }
        return url[..<colon].lowercased()
    }
}
