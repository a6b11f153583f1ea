public import ScreenMedia

/// Why X11 capture could not start or had to stop.
public typealias X11CaptureError = ScreenError<X11CaptureFailure>

public enum X11CaptureFailure: Sendable, Hashable {
    case noDisplay
    case cannotOpenDisplay
    case missingExtension
    case unsupportedVisual
    case unknownWindow
    /// A window pattern matches several windows.
    case ambiguousWindow
    case unknownMonitor
    case badRegion
    case windowClosed
    case connectionLost
    case captureFailed
}

extension X11CaptureFailure: CaptureFailureKind {
    /// The X server may (re)appear; targets that do not exist will not.
    public var isTransient: Bool {
        switch self {
        case .noDisplay, .cannotOpenDisplay, .connectionLost, .captureFailed: true
        case .missingExtension, .unsupportedVisual, .unknownWindow, .ambiguousWindow, .unknownMonitor, .badRegion, .windowClosed: false
        }
    }
}
