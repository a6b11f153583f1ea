import ScreenTransport

/// The kinds of destination a share can send to, chosen by URL. A new kind (WHIP, HLS push) is one file
/// with its ``DestinationKind`` and one line here.
public enum ShareDestinations {
    public static let all: [DestinationKind] = [
        RelayDestination.kind,
        FileDestination.kind,
        WHIPDestination.kind,
    ]

    /// Every scheme some kind takes, for messages.
    public static func schemes(among kinds: [DestinationKind] = all) -> [String] { kinds.flatMap { $0.schemes.map { $0 + "://" } } }

    /// The kind that takes `url`, if any.
    public static func kind(for url: String, among kinds: [DestinationKind] = all) -> DestinationKind? {
        let scheme = DestinationKind.scheme(of: url)
        return kinds.first { $0.schemes.contains(scheme) }
    }
}
