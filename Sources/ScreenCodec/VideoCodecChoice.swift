public import ScreenMedia

/// `--codec`: a codec, or `auto`, which picks one by the frame rate (the rule and the measurements behind it,
/// at 720p to 1440p, are in docs/performance.md, "Choosing the codec").
public enum VideoCodecChoice: String, Sendable, Hashable, CaseIterable {
    case auto, av1, vp9, vp8, h264

    /// The codec to encode at `framesPerSecond` with.
    public func resolved(framesPerSecond: Double) -> VideoCodec {
        switch self {
        case .av1: .av1
        case .vp9: .vp9
        case .vp8: .vp8
        case .h264: .h264
        case .auto: Self.automatic(framesPerSecond: framesPerSecond)
        }
    }

    /// AV1 up to ``av1FrameRateLimit``, VP9 above it. Measured (`Benchmarks/codecs.sh`, text scrolling a line
    /// per frame, 720p to 1440p): at 5 fps AV1 takes less CPU, a quarter of the bytes and gives the better
    /// picture at every size; from 15 fps it still takes less CPU and fewer bytes, but libaom's realtime rate
    /// control spends only a third of the target and the picture is worse than VP9's at most sizes.
    static func automatic(framesPerSecond: Double) -> VideoCodec {
        framesPerSecond <= av1FrameRateLimit ? .av1 : .vp9
    }

    static let av1FrameRateLimit = 10.0
}
