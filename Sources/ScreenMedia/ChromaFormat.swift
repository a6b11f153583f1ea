/// How a picture's colour is sampled: 4:2:0 keeps one colour sample per 2×2 pixels (half the resolution each
/// way, what video usually is); 4:4:4 keeps one per pixel, so that 1-pixel coloured strokes (syntax-highlighted
/// code, red error text, coloured links) stay sharp.
public enum ChromaFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case yuv420 = "420"
    case yuv444 = "444"

    /// How many pixels share one colour sample, across and down (1 or 2).
    public var horizontalShare: Int { self == .yuv420 ? 2 : 1 }
    public var verticalShare: Int { self == .yuv420 ? 2 : 1 }

    /// The name people know it by: "4:2:0", "4:4:4".
    public var displayName: String { self == .yuv420 ? "4:2:0" : "4:4:4" }
}
