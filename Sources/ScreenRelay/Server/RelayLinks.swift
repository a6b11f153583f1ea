import Hummingbird
import ScreenTransport
import ScreenWire

/// The URLs the relay gives out (a session's credentials, viewer links): under its public URL, else the name the
/// client reached it by, else the address it listens on.
struct RelayLinks: Sendable {
    /// `--public-url`.
    let publicURL: String?
    /// The address the relay listens on.
    let host: String
    /// `https` when the relay serves TLS itself.
    let scheme: String
    let port: ListeningPort

    /// `http(s)://host:port` as clients should use it: the public URL, else the address the relay listens
    /// on — but never a wildcard address, which no client can connect to: then this machine's address on
    /// the network (see ``ReachableAddress``).
    func base(port: Int) -> String {
        if let publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        let host = ReachableAddress.replacingWildcard(host)
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The base URL for links in an answer to `request`, once the relay listens: the public URL, else the `Host`
    /// the client used (the name it reached us by works for it and for whoever it shares the link with), with the
    /// scheme a TLS proxy in front says it was reached by (`X-Forwarded-Proto`).
    func base(for request: Request) async throws -> String {
        let port = try await port.wait()
        guard publicURL == nil, let host = request.head.authority, ReachableAddress.isValidHost(host) else { return base(port: port) }
        let forwarded = request.headers[.xForwardedProto]?.lowercased()
        let scheme = forwarded.flatMap { $0 == "https" || $0 == "http" ? $0 : nil } ?? scheme
        return "\(scheme)://\(host)"
    }

    /// The session's credentials with the URLs clients use, once the relay listens (throws ``RelayError``
    /// if it never will).
    func credentials(for session: RelayServer.OpenedSession, base: String? = nil) async throws -> SessionCredentials {
        let port = try await port.wait()
        let base = base ?? self.base(port: port)
        return SessionCredentials(
            sessionId: session.sessionId, token: session.token, relayURL: RelayEndpoint.webSocketURL(server: base),
            viewerURL: Self.viewerURL(base: base, sessionId: session.sessionId, token: session.viewerToken))
    }

    /// The viewer page of `sessionId` with `token`.
    static func viewerURL(base: String, sessionId: String, token: String) -> String {
        "\(base)/view/\(sessionId)?token=\(token)"
    }
}
