public import ScreenTransportClient

/// The command line's options for destinations.
public struct DestinationOptions: Sendable, Equatable {
    /// A publisher token for a relay (else a session is made with the relay secret).
    public var token: String?
    /// Reconnect to a relay with backoff when it cannot be reached or the connection drops.
    public var reconnect: Bool
    /// Replace an existing file.
    public var overwrite: Bool
    /// Whom to trust for an `https://` or `wss://` relay's certificate.
    public var trust: ClientTrust
    /// The bearer token a WHIP endpoint expects.
    public var whipToken: String?

    public init(token: String? = nil, reconnect: Bool = true, overwrite: Bool = false, trust: ClientTrust = .system, whipToken: String? = nil) {
        self.token = token
        self.reconnect = reconnect
        self.overwrite = overwrite
        self.trust = trust
        self.whipToken = whipToken
    }
}
