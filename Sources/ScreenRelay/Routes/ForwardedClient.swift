import Foundation
import Hummingbird

/// The address of the client behind a reverse proxy the relay trusts: the per-address caps then count the client,
/// not the proxy (through which every remote viewer comes). Only a proxy named in `--trust-proxy` is believed: from
/// anyone else, `X-Forwarded-For` and `Forwarded` are a client's own words and are ignored.
enum ForwardedClient {
    /// The client's address: `peer` itself unless `peer` is in `trusted`; then, of the addresses `Forwarded`
    /// (`for=`) or else `X-Forwarded-For` lists, the nearest one that is not a trusted proxy (what each proxy
    /// appends is read from the right, as nginx's `real_ip_recursive` does). Nil when the peer is a trusted proxy
    /// that names no client.
    static func address(peer: String?, forwarded: String?, xForwardedFor: String?, trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer) else { return peer }
        let listed = forwarded.map(forAddresses) ?? xForwardedFor.map { $0.split(separator: ",").map(clean) } ?? []
        for address in listed.reversed() where !address.isEmpty && !trusted.contains(address) {
            return address
        }
        return nil
    }

    /// The client a trusted proxy forwarded `request` for: nil when the peer is not a proxy named by
    /// `--trust-proxy` (its own address is the client's) or when the proxy names no client.
    static func behindProxy(_ request: Request, peer: String?, trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer) else { return nil }
        return address(peer: peer, forwarded: request.headers[.forwarded], xForwardedFor: request.headers[.xForwardedFor], trusted: trusted)
    }

    /// The `for=` addresses of a `Forwarded` header (RFC 7239), in order.
    private static func forAddresses(_ header: String) -> [String] {
        header.split(separator: ",").flatMap { element in
            element.split(separator: ";").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingWhitespace().lowercased() == "for" else { return nil }
                return clean(parts[1])
            }
        }
    }

    /// An address as a header writes it, bare: quotes, `[…]` around IPv6 and a `:port` taken off.
    private static func clean(_ raw: Substring) -> String {
        var text = raw.trimmingWhitespace()
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") { return String(text[text.index(after: text.startIndex)..<end]) }
        // An IPv4 address with a port ("1.2.3.4:5678"); a bare IPv6 address has more than one colon.
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") { return String(text[..<colon]) }
        return text
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}

extension RelayConfiguration {
    /// Whether `text` is an IPv4 or IPv6 address as a proxy's peer address is compared (`--trust-proxy`): the
    /// address itself, no name, port or prefix length.
    public static func isProxyAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
