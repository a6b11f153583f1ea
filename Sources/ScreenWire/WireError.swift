public import ScreenMedia

/// Error codes sent in `error` control messages and raised by the parsers. The raw values are the wire names.
public enum WireErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Bytes that do not form a message of this protocol (bad magic, truncated, inconsistent lengths, bad JSON).
    case malformed
    /// A protocol version this peer does not speak.
    case unsupportedVersion
    /// A message larger than the limit.
    case tooLarge
    /// Frame metadata longer than 32 bytes.
    case metadataTooLarge
    /// A control message type this peer does not know.
    case unknownMessage
    /// No token, or a token whose signature does not verify.
    case invalidToken
    /// A token past its expiry.
    case tokenExpired
    /// A token for another session.
    case wrongSession
    /// The token's role does not allow this (a subscriber publishing, a publisher archiving).
    case forbidden
    /// A stream or connection that does not exist.
    case notFound
    /// A message that is valid but not allowed now (publishing before hello).
    case badState
    /// A signal over its limits: type not 1–128 characters of `A-Za-z0-9-_~`, or data over 8 KB. Not fatal.
    case invalidSignal
    /// A subscriber that took none of the media queued for it for too long (it stopped reading): closed so that
    /// the relay does not hold media for it. It may reconnect.
    case tooSlow
    /// A client that went on sending a request far over its allowance (keyframe requests): closed. It may
    /// reconnect.
    case rateLimited
    /// The session (or the token's share of it) holds all the connections it may: the client may try again later,
    /// with a backoff.
    case full
    /// The server failed; the client may retry.
    case internalError
}

/// A protocol violation found while parsing or handling a message.
public typealias WireError = ScreenError<WireErrorCode>
