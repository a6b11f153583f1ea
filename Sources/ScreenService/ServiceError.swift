public import ScreenMedia

/// Why a command could not read its settings or use its control socket; the message names where and why.
public typealias ServiceError = ScreenError<ServiceFailure>

public enum ServiceFailure: Sendable, Hashable {
    /// A configuration file or environment variable that cannot be used (exit 78).
    case badConfiguration
    /// The control socket cannot be made, reached or read.
    case controlSocket
}
