public import ScreenMedia

/// A failure of the encoder, the decoder or pixel conversion.
public typealias CodecError = ScreenError<CodecFailure>

public enum CodecFailure: Sendable, Hashable {
    case unsupportedConfiguration
    case encoderFailed
    case decoderFailed
    case corruptInput
}
