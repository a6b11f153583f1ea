/// Where a relay's WebSocket is, given the relay's HTTP base URL.
public enum RelayEndpoint {
    /// The WebSocket path of every relay.
    public static let webSocketPath = "/ws"

    /// `http://host:port` → `ws://host:port/ws`, `https://…` → `wss://…/ws` (a trailing slash is ignored).
    public static func webSocketURL(server: String) -> String {
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        if base.hasPrefix("https://") { return "wss://" + base.dropFirst(8) + webSocketPath }
        if base.hasPrefix("http://") { return "ws://" + base.dropFirst(7) + webSocketPath }
        return base + webSocketPath
    }
}

extension String {
    /// Percent-encoded as one URL component (a path segment, a query value, RFC 8187's `filename*`): every UTF-8
    /// byte but RFC 3986's unreserved ASCII (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
    public var percentEncodedComponent: String {
        utf8.map { byte -> String in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "-._~".utf8.contains(byte)
            return unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
        }.joined()
    }
}
