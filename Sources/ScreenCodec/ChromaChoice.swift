public import ScreenMedia

/// `--chroma`: 4:2:0, 4:4:4, or `auto`, which takes 4:4:4 where it pays. The rule and the measurements behind it
/// (`Benchmarks/chroma.sh`) are in docs/performance.md, "4:4:4": on coloured text 4:4:4 gains 8–14 dB of colour
/// PSNR for ×1.15–1.3 the CPU and up to ×2.3 the bytes; on grey text it gains little for the same costs, and at
/// 30 fps its CPU is what the frame interval lacks.
public enum ChromaChoice: String, Sendable, Hashable, CaseIterable {
    case auto
    case yuv420 = "420"
    case yuv444 = "444"

    /// The most colour `codec` is to be encoded with at this frame rate and bit rate, and whether the first
    /// picture's content is to decide between it and 4:2:0 (``VideoEncoderConfiguration/chromaFollowsContent``).
    public func resolved(codec: VideoCodec, framesPerSecond: Double, bitrateKbps: Int) -> (chroma: ChromaFormat, followsContent: Bool) {
        switch self {
        case .yuv420: (.yuv420, false)
        case .yuv444: (.yuv444, false)
        case .auto:
            codec != .vp8 && codec != .h264 && framesPerSecond <= Self.auto444FrameRateLimit && bitrateKbps >= Self.auto444LowestKbps(codec)
                ? (.yuv444, true) : (.yuv420, false)
        }
    }

    /// Above this 4:4:4's extra CPU (×1.2 on a scrolling terminal at 30 fps, already short of its interval on one
    /// core) buys nothing a moving picture shows.
    static let auto444FrameRateLimit = 10.0
    /// Below this the luma loses to the colour planes: AV1 at 300 kbit/s lost 0.002 of luma SSIM in 4:4:4, VP9
    /// 0.006 at 300 and 700.
    static func auto444LowestKbps(_ codec: VideoCodec) -> Int { codec == .vp9 ? 1000 : 500 }
    /// The share of 2×2 blocks with coloured detail (``ColourDetail``) from which 4:4:4 pays.
    public static let colourDetailShare = 0.002
}
