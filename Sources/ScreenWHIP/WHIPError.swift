public import ScreenMedia
public import ScreenSession

/// Why publishing into a WHIP endpoint failed, in words the user can act on.
public typealias WHIPError = ScreenError<WHIPFailure>

public enum WHIPFailure: Sendable, Hashable, ConnectionFailureKind {
    /// The endpoint could not be reached (network, TLS, timeout), or answered something WHIP does not expect.
    case unreachable
    /// The endpoint refused the token (HTTP 401 or 403).
    case refusedToken
    /// The endpoint's answer cannot be used: no video in the codec offered, or SDP webrtcbin rejects.
    case unusableAnswer
    /// WebRTC did not connect, or the connection was lost (ICE, DTLS, the SFU gone silent).
    case connection
    /// A frame in another codec than the one offered.
    case wrongCodec

    /// A refused token and an unusable answer would be met again: not retried.
    public var isPermanent: Bool {
        switch self {
        case .refusedToken, .unusableAnswer, .wrongCodec: true
        case .unreachable, .connection: false
        }
    }
}
