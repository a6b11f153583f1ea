public import ScreenMedia

/// Synthetic BGRA content with known pixels.
public enum TestPattern {
    /// Four solid quadrants: red, green, blue, white (top-left, top-right, bottom-left, bottom-right).
    public static let quadrantColors: [(r: UInt8, g: UInt8, b: UInt8)] = [
        (230, 30, 30), (30, 200, 40), (20, 40, 220), (240, 240, 240),
    ]

    /// The expected colour of the quadrant pattern at (x, y) of a width × height picture.
    public static func quadrantColor(x: Int, y: Int, width: Int, height: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        quadrantColors[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
    }

    public static func fillQuadrants(_ frame: VideoFrame) {
        fill(frame) { x, y in quadrantColor(x: x, y: y, width: frame.width, height: frame.height) }
    }

    public static func fill(_ frame: VideoFrame, color: (_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8)) {
        let stride = frame.bytesPerRow
        frame.withUnsafeMutableBytes { raw in
            for y in 0..<frame.height {
                for x in 0..<frame.width {
                    let c = color(x, y)
                    raw[y * stride + x * 4] = c.b
                    raw[y * stride + x * 4 + 1] = c.g
                    raw[y * stride + x * 4 + 2] = c.r
                    raw[y * stride + x * 4 + 3] = 255
                }
            }
        }
        frame.markAllChanged()
    }

    /// Whether any pixel of `frame` (every second one in each direction) is within `tolerance` of `color`.
    public static func shows(_ frame: VideoFrame, _ color: (r: UInt8, g: UInt8, b: UInt8), tolerance: Int = 40) -> Bool {
        for y in stride(from: 0, to: frame.height, by: 2) {
            for x in stride(from: 0, to: frame.width, by: 2) where difference(frame, x: x, y: y, color) <= tolerance {
                return true
            }
        }
        return false
    }

    /// Largest per-channel difference between a frame's pixel and an expected colour.
    public static func difference(_ frame: VideoFrame, x: Int, y: Int, _ expected: (r: UInt8, g: UInt8, b: UInt8)) -> Int {
        let p = frame.pixel(x: x, y: y)
        return max(abs(Int(p.r) - Int(expected.r)), abs(Int(p.g) - Int(expected.g)), abs(Int(p.b) - Int(expected.b)))
    }

    /// The colours of ``fillColouredLines(_:)``: red, green, blue on a dark background.
    public static let lineColours: [(r: UInt8, g: UInt8, b: UInt8)] = [(235, 40, 40), (40, 215, 60), (60, 90, 250)]
    public static let lineBackground: (r: UInt8, g: UInt8, b: UInt8) = (18, 18, 26)

    /// 1-pixel-wide vertical lines, red, green and blue in turn, every second column on a dark background: what
    /// syntax-highlighted code and coloured terminal text are made of. 4:2:0 shares one colour between each line
    /// and the dark column beside it, so the lines come out dull and the background tinted; 4:4:4 keeps both.
    public static func fillColouredLines(_ frame: VideoFrame) {
        fill(frame) { x, _ in lineColour(x: x) ?? lineBackground }
    }

    /// The colour of the line in column `x` of ``fillColouredLines(_:)``, nil between lines.
    public static func lineColour(x: Int) -> (r: UInt8, g: UInt8, b: UInt8)? {
        x % 2 == 1 ? lineColours[(x / 2) % 3] : nil
    }

    /// How far `frame` is from ``fillColouredLines(_:)`` in the line columns: the mean, over their pixels within
    /// `area` (rows and columns, 8 pixels in from the picture's edges when nil), of the largest per-channel
    /// difference. Under 20: the lines keep their colour; 4:2:0 gives 50 and more.
    public static func colouredLineError(_ frame: VideoFrame, in area: PixelRect? = nil) -> Double {
        let area = area ?? PixelRect(x: 8, y: 8, width: frame.width - 16, height: frame.height - 16)
        var total = 0, count = 0
        for y in stride(from: area.y, to: area.maxY, by: 3) {
            for x in area.x..<area.maxX {
                guard let colour = lineColour(x: x) else { continue }
                total += difference(frame, x: x, y: y, colour)
                count += 1
            }
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }
}
