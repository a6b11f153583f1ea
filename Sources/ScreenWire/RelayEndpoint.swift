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
