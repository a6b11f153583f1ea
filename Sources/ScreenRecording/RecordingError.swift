public import ScreenMedia

/// A recording could not be opened, written or read. Frames written before a write error stay readable.
public typealias RecordingError = ScreenError<RecordingFailure>

public enum RecordingFailure: Sendable, Hashable {
    case cannotOpen
    case writeFailed
    case readFailed
    case unsupportedContent
}
