/// Why X11 capture could not start or had to stop. Each message says what to do about it.
public struct X11CaptureError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case noDisplay
        case cannotOpenDisplay
        case missingExtension
        case unsupportedVisual
        case unknownWindow
        case unknownMonitor
        case badRegion
        case windowClosed
        case connectionLost
        case captureFailed
    }

    public let kind: Kind
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
