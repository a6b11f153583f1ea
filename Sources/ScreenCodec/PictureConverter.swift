public import ScreenMedia

/// BGRA → I420 conversion of whole pictures exactly as the encoders do it (libyuv), for measuring its cost
/// against other per-frame work (`relaybench tiles`).
public final class PictureConverter {
    private let picture: I420Image

    public init(width: Int, height: Int) throws(CodecError) {
        picture = try I420Image(width: width, height: height)
    }

    /// Converts all of `frame` (of the converter's size).
    public func convertAll(_ frame: VideoFrame) { picture.convert(from: frame, everything: true) }
}

@available(*, unavailable)
extension PictureConverter: Sendable {}
