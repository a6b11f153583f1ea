import Foundation
import Hummingbird

/// Which `Host` and `Origin` the relay answers. A page on another site that resolves its own name to this
/// relay (DNS rebinding) sends that name as `Host`, and a page that opens a WebSocket here sends its own origin:
/// both are refused, so nothing the relay serves — pages, links with tokens, `/metrics`, a session's WebSocket —
/// can be read or driven from another origin. Allowed: `localhost`, loopback addresses, the address the relay
/// listens on, this machine's addresses and host name, the host of `--public-url`, and each `--allowed-host`.
struct HostPolicy: Sendable {
    /// Lowercased host names and addresses, without port or brackets.
    let names: Set<String>

    init(names: some Sequence<String>) {
        self.names = Set(names.map(Self.normalized))
    }

    /// The names a relay with this configuration answers to.
    static func forRelay(listeningOn host: String, publicURL: String?, allowed: [String], machineNames: [String]) -> HostPolicy {
        var names = allowed + machineNames
        if !ReachableAddress.isWildcard(host) { names.append(host) }
        if let publicURL, let publicHost = URLComponents(string: publicURL)?.host { names.append(publicHost) }
        return HostPolicy(names: names)
    }

    /// Whether a request's `Host` (its authority, `name[:port]`) is one of ours; a request without one (HTTP/1.0)
    /// is answered.
    func allowsHost(_ authority: String?) -> Bool {
        guard let authority else { return true }
        return allowsName(Self.host(ofAuthority: authority))
    }

    /// Whether a WebSocket upgrade's `Origin` is a page of ours; programs that are no browser send none.
    func allowsOrigin(_ origin: String?) -> Bool {
        guard let origin else { return true }
        guard let host = URLComponents(string: origin)?.host, !host.isEmpty else { return false }
        return allowsName(host)
    }

    private func allowsName(_ name: String) -> Bool {
        let name = Self.normalized(name)
        return names.contains(name) || ReachableAddress.isLoopback(name)
    }

    /// `name` of `name:port`, `[v6]:port` or `[v6]`.
    static func host(ofAuthority authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if authority.count(where: { $0 == ":" }) == 1, let colon = authority.firstIndex(of: ":") { return String(authority[..<colon]) }
        return authority
    }

    private static func normalized(_ name: String) -> String {
        var name = name.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}
