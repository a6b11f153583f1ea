public import ScreenMedia

/// What metadata each published frame carries.
public enum MetadataPolicy: Sendable, Equatable {
    /// The ISO-8601 UTC capture time with milliseconds (24 bytes), as in seed 000. The default.
    case captureTime
    /// The same bytes on every frame.
    case fixed(FrameMetadata)
    /// No metadata.
    case none

    /// Parses the `--metadata` option: `none`, `time` (the default) or a fixed text of at most 32 bytes.
    public init(option: String?) throws(FrameMetadataError) {
        switch option {
        case nil, "time": self = .captureTime
        case "none": self = .none
        case let text?: self = .fixed(try FrameMetadata(text: text))
        }
    }

    func metadata(for frame: VideoFrame) -> FrameMetadata {
        switch self {
        case .captureTime: .iso8601(frame.wallClock)
        case .fixed(let metadata): metadata
        case .none: .empty
        }
    }
}
