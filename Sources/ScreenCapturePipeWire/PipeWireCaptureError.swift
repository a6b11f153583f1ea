public import ScreenMedia

/// Why PipeWire capture could not start or had to stop.
public typealias PipeWireCaptureError = ScreenError<PipeWireCaptureFailure>

public enum PipeWireCaptureFailure: Sendable, Hashable {
    /// No PipeWire daemon answers (no socket, or the given file descriptor is not a PipeWire connection).
    case noDaemon
    /// The stream failed: no such node, the node went away, or PipeWire reported an error.
    case streamFailed
    /// The node offers no format we can read (we take BGRx, BGRA, RGBx and RGBA in memory; not DMA-BUF).
    case unsupportedFormat
    /// Connected, but no frame came within the timeout.
    case noFrames
    /// Window masks were asked for: a PipeWire stream names no windows, so they could not be applied.
    case windowMasksUnsupported
}

extension PipeWireCaptureFailure: CaptureFailureKind {
    /// A daemon or node that is gone may come back (a restarted PipeWire, a new screen cast); a mask that cannot
    /// be applied never will.
    public var isTransient: Bool { self != .windowMasksUnsupported }
}
