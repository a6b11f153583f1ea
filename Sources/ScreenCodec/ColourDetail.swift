public import ScreenMedia

/// How much of a picture's colour 4:2:0 would lose: the share of 2×2 pixel blocks whose colours differ inside the
/// block by more than ``threshold`` levels of U or V (BT.601). Coloured text, syntax highlighting and coloured UI
/// lines score percents; grey text on any background, flat colours and smooth photographs score next to nothing,
/// because 4:2:0 keeps one colour per 2×2 block and loses only what differs within one.
public enum ColourDetail {
    /// Colour-difference spread within a 2×2 block that 4:2:0 visibly smears (a 1-pixel red stroke on black: ~110).
    static let threshold = 32
    /// Every how many block rows are looked at: a screen's coloured detail spans many rows, and one pass over a
    /// 1080p picture then reads an eighth of it.
    static let rowStep = 4

    /// The share (0–1) of the sampled 2×2 blocks of `frame` with coloured detail.
    public static func share(of frame: VideoFrame) -> Double {
        let (width, height, rowBytes) = (frame.width & ~1, frame.height & ~1, frame.bytesPerRow)
        guard width >= 2, height >= 2 else { return 0 }
        var detailed = 0, sampled = 0
        frame.withUnsafeBytes { raw in
            guard let pixels = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for row in stride(from: 0, to: height, by: 2 * rowStep) {
                let top = pixels + row * rowBytes, bottom = top + rowBytes
                for column in stride(from: 0, to: width, by: 2) {
                    var (lowU, highU, lowV, highV) = (Int.max, Int.min, Int.max, Int.min)
                    for corner in 0..<4 {
                        let pixel = (corner < 2 ? top : bottom) + (column + (corner & 1)) * 4
                        let (b, g, r) = (Int(pixel[0]), Int(pixel[1]), Int(pixel[2]))
                        let u = (-38 * r - 74 * g + 112 * b) >> 8, v = (112 * r - 94 * g - 18 * b) >> 8
                        (lowU, highU, lowV, highV) = (min(lowU, u), max(highU, u), min(lowV, v), max(highV, v))
                    }
                    if highU - lowU > threshold || highV - lowV > threshold { detailed += 1 }
                    sampled += 1
                }
            }
        }
        return sampled == 0 ? 0 : Double(detailed) / Double(sampled)
    }
}
