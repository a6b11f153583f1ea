public import ScreenMedia
public import ScreenWire

/// Failures of a relay connection.
public typealias RelayClientError = ScreenError<RelayClientFailure>

public enum RelayClientFailure: Sendable, Hashable {
    /// The relay could not be reached or the WebSocket upgrade failed.
    case unreachable
    /// The relay refused us (the error code it sent is in the message).
    case refused(WireErrorCode)
    /// The relay closed the connection.
    case closed
}

