/// Why a share could not start or had to stop, in words a user can act on; the kind decides the exit status.
public struct ShareError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Nothing was shared: no display, a bad target, an unwritable output, a relay that cannot be reached.
        case cannotStart
        /// The share started and then failed (display lost, disk full, token refused).
        case failed
        /// The user declined the ScreenCast portal's dialog.
        case declined
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
