/// A failure of the encoder, the decoder or pixel conversion, with a message a user can act on.
public struct CodecError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case unsupportedConfiguration
        case encoderFailed
        case decoderFailed
        case corruptInput
    }

    public let kind: Kind
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
