/// A failure with a kind a program can match on and a message a user can act on.
///
/// Each module names its own kinds and an alias (`X11CaptureError`, `CodecError`, `RecordingError`), so
/// callers catch one concrete type per module and switch on `kind`.
public struct ScreenError<Kind: Hashable & Sendable>: Error, Sendable, CustomStringConvertible {
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
