import CX11
import ScreenMedia

/// The pointer image (premultiplied BGRA) and where it was last drawn, for blending it into frames.
/// Shapes are fetched from XFixes only when the shape changes, so drawing it allocates nothing per frame.
struct CursorOverlay {
    private(set) var pixels: [UInt32] = []
    private(set) var width = 0
    private(set) var height = 0
    private var hotX = 0
    private var hotY = 0
    /// Where the cursor was drawn in the last frame, in capture coordinates (empty when not drawn).
    private(set) var drawnRect = PixelRect(x: 0, y: 0, width: 0, height: 0)

    /// Loads the current cursor shape from XFixes.
    mutating func reloadShape(_ display: OpaquePointer) {
        guard let image = XFixesGetCursorImage(display) else { return }
        defer { XFree(image) }
        let cursor = image.pointee
        width = Int(cursor.width)
        height = Int(cursor.height)
        hotX = Int(cursor.xhot)
        hotY = Int(cursor.yhot)
        pixels.removeAll(keepingCapacity: true)
        // XFixes hands out premultiplied ARGB in `unsigned long`s; keep the low 32 bits.
        for index in 0..<(width * height) { pixels.append(UInt32(truncatingIfNeeded: cursor.pixels[index])) }
    }

    /// The rectangle the cursor covers when its hotspot is at (x, y).
    func rect(pointerX x: Int, pointerY y: Int) -> PixelRect {
        PixelRect(x: x - hotX, y: y - hotY, width: width, height: height)
    }

    /// Blends the cursor into `frame` with its hotspot at (x, y) (capture coordinates) and remembers where.
    mutating func draw(into frame: VideoFrame, pointerX x: Int, pointerY y: Int) {
        let target = rect(pointerX: x, pointerY: y)
        let visible = target.intersection(frame.bounds)
        drawnRect = visible
        guard !visible.isEmpty, !pixels.isEmpty else { return }
        let stride = frame.bytesPerRow
        pixels.withUnsafeBufferPointer { cursor in
            frame.withUnsafeMutableBytes { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for row in visible.y..<visible.maxY {
                    let cursorRow = (row - target.y) * width
                    for column in visible.x..<visible.maxX {
                        let source = cursor[cursorRow + column - target.x]
                        let alpha = source >> 24
                        if alpha == 0 { continue }
                        let pixel = base + row * stride + column * 4
                        let inverse = 255 - alpha
                        // Premultiplied "over": out = src + dst × (1 − αsrc).
                        pixel[0] = UInt8(min(255, (source & 0xFF) + (UInt32(pixel[0]) * inverse + 127) / 255))
                        pixel[1] = UInt8(min(255, (source >> 8 & 0xFF) + (UInt32(pixel[1]) * inverse + 127) / 255))
                        pixel[2] = UInt8(min(255, (source >> 16 & 0xFF) + (UInt32(pixel[2]) * inverse + 127) / 255))
                    }
                }
            }
        }
    }

    mutating func forgetDrawn() { drawnRect = PixelRect(x: 0, y: 0, width: 0, height: 0) }
}
