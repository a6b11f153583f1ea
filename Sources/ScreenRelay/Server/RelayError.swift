public import ScreenMedia

/// Why the relay refused an archive call or could not start, in words the caller can act on.
public typealias RelayError = ScreenError<RelayFailure>

public enum RelayFailure: Sendable, Hashable {
    /// No such session or archive (HTTP 404).
    case notFound
    /// The session is already being recorded (HTTP 409).
    case conflict
    /// The request is wrong (HTTP 400).
    case badRequest
    /// The archive index or files cannot be written (HTTP 500).
    case storage
    /// A recording would pass a disk quota or the free-space floor (HTTP 507).
    case quota
    /// Another relay owns the data directory.
    case dataDirectoryInUse
    /// The relay cannot listen (the port is taken, the address is not this machine's).
    case cannotListen
    /// The TLS certificate or key cannot be used (unreadable, not PEM, expired, not a pair).
    case badCertificate
    /// No relay secret is set, or it cannot be read or is too short.
    case badSecret
}
