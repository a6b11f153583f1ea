/// A recording could not be opened, written or read. Frames written before a write error stay readable.
public struct RecordingError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case cannotOpen
        case writeFailed
        case readFailed
        case unsupportedContent
    }

    public let kind: Kind
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
