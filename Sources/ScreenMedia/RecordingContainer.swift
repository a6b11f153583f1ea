/// The file format a recording of a codec is written in. WebM for AV1, VP9 and VP8: what every browser plays.
/// Matroska for H.264, which WebM does not allow: WebM is Matroska restricted to the free codecs, so the file
/// has the same elements, the same timed metadata track and the same reader, only its DocType and H.264 track
/// differ (MP4 would need another writer, another reader and another home for the metadata).
public enum RecordingContainer: String, Sendable, Hashable, CaseIterable {
    case webm
    case matroska

    /// WebM for the codecs it allows, Matroska for H.264.
    public init(for codec: VideoCodec) {
        self = codec == .h264 ? .matroska : .webm
    }

    /// The file name's suffix, without its dot.
    public var fileExtension: String {
        switch self {
        case .webm: "webm"
        case .matroska: "mkv"
        }
    }

    /// The media type a download of the file is served as.
    public var mediaType: String {
        switch self {
        case .webm: "video/webm"
        case .matroska: "video/x-matroska"
        }
    }

    /// Why a recording of `codec` cannot be written to `path`: a `.webm` name for a stream WebM cannot carry.
    /// Nil when the name suits it (a `.mkv` name suits every codec: a WebM is a Matroska file).
    public static func refusal(path: String, codec: VideoCodec) -> String? {
        guard RecordingContainer(for: codec) == .matroska, path.lowercased().hasSuffix(".webm") else { return nil }
        return "\(path): WebM cannot carry \(codec); name the file .mkv (Matroska, with the same timed metadata track) to record \(codec)"
    }
}
