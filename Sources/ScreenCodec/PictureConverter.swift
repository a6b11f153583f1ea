public import ScreenMedia

/// BGRA → I420 (or I444) conversion of whole pictures exactly as the encoders do it (libyuv), for measuring its cost
/// against other per-frame work (`relaybench tiles`).
public final class PictureConverter {
    private let picture: YUVPicture

    public init(width: Int, height: Int, chroma: ChromaFormat = .yuv420) throws(CodecError) {
        picture = try YUVPicture(width: width, height: height, chroma: chroma)
    }

    /// Converts all of `frame` (of the converter's size).
    public func convertAll(_ frame: VideoFrame) { picture.convert(from: frame, everything: true) }
}

@available(*, unavailable)
extension PictureConverter: Sendable {}
