import Logging
public import ScreenMedia
public import ScreenTransport
import ScreenWire

/// A connection's failure as ``ReconnectStateMachine`` weighs it: its sentence, and whether another attempt
/// would meet it again (a refused token would; a lost connection would not).
public protocol ConnectionFailure: Error, Sendable {
    var message: String { get }
    var isPermanent: Bool { get }
}

/// The kinds of a transport's failures, each permanent or not (as ``CaptureFailureKind`` for capture).
public protocol ConnectionFailureKind: Hashable, Sendable {
    var isPermanent: Bool { get }
}

extension ScreenError: ConnectionFailure where Kind: ConnectionFailureKind {
    public var isPermanent: Bool { kind.isPermanent }
}

extension RelayClientFailure: ConnectionFailureKind {
    /// Refusals that another attempt would meet again.
    public var isPermanent: Bool {
        guard case .refused(let code) = self else { return false }
        return [.invalidToken, .tokenExpired, .wrongSession, .forbidden, .unsupportedVersion].contains(code)
    }
}
