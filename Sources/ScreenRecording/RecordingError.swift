public import ScreenMedia

/// A recording could not be opened, written or read. Frames written before a write error stay readable.
public typealias RecordingError = ScreenError<RecordingFailure>

public enum RecordingFailure: Sendable, Hashable {
    case cannotOpen
    case writeFailed
    case readFailed
    case unsupportedContent
    /// The muxer refused one frame as invalid data (nine VP9 frames in a row that are not shown, say): that
    /// frame is left out and the file goes on.
    case frameRefused
}
