import Foundation

/// Where a relay's URL leads, as a connection to it needs it: the host to connect to, the port (the scheme's by
/// default), whether TLS is spoken, and the request target and `Host` header of the HTTP request made there.
struct RelayAddress: Sendable, Equatable {
    /// A name, or an address literal without brackets.
    var host: String
    var port: Int
    var secure: Bool
    /// The path (`/` when empty) and query, still percent-encoded.
    var target: String
    var hostHeader: String

    /// `url` when its scheme is `plain` or `secure` (`http`/`https`, `ws`/`wss`) and it has a host; nil otherwise.
    init?(_ url: String, plain: String, secure secureScheme: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == plain || scheme == secureScheme, let host = components.host.map(Self.unbracketed), !host.isEmpty
        else { return nil }
        self.host = host
        secure = scheme == secureScheme
        port = components.port ?? (secure ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        let bracketed = host.contains(":") ? "[\(host)]" : host
        hostHeader = components.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    /// The host is an address literal, not a name.
    var isAddress: Bool { host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." } }

    /// Foundation on Linux gives an IPv6 literal's host with its brackets (`[::1]`), which a lookup would take for a name.
    private static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
