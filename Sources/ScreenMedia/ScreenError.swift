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

extension ScreenError: Equatable {}

/// A capture failure that says whether it may pass: a display, PipeWire daemon or portal that is not there
/// (yet, or any more) may come back; a closed window, a bad region or a user who declined will not. A share
/// with `--capture-retry` tries again after the transient ones only.
public protocol CaptureFailure: Error {
    var isTransient: Bool { get }
}

/// The kinds of a module's capture failures, each transient or not.
public protocol CaptureFailureKind: Hashable, Sendable {
    var isTransient: Bool { get }
}

extension ScreenError: CaptureFailure where Kind: CaptureFailureKind {
    public var isTransient: Bool { kind.isTransient }
}

extension String {
    /// The text a C function wrote into `buffer` (UTF-8, up to its terminating zero).
    public init(nullTerminated buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
