/// The pointer image (premultiplied BGRA) and where it was last drawn, for blending it into frames. The
/// shape is set only when it changes, so drawing allocates nothing per frame.
///
/// A source that can read the screen's pixels again (X11: the next grab) just redraws the rectangle the
/// cursor covered. One that cannot (PipeWire: a cursor-only update carries no picture) draws with
/// `keepingPixelsBelow` and calls ``restorePixelsBelow(in:)`` before the next change.
public struct CursorOverlay: Sendable {
    private var pixels: [UInt32] = []
    public private(set) var width = 0
    public private(set) var height = 0
    private var hotX = 0
    private var hotY = 0
    /// Where the cursor was drawn in the last frame, in capture coordinates (empty when not drawn).
    public private(set) var drawnRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
    /// The frame's pixels under `drawnRect` before the cursor was blended in (when kept).
    private var pixelsBelow: [UInt8] = []
    private var keptPixelsBelow = false

    public init() {}

    /// Replaces the shape: `fill` writes `width × height` premultiplied pixels (0xAARRGGBB, i.e. B, G, R, A
    /// in memory) into the emptied array.
    public mutating func setShape(width: Int, height: Int, hotX: Int, hotY: Int, fill: (inout [UInt32]) -> Void) {
        self.width = width
        self.height = height
        self.hotX = hotX
        self.hotY = hotY
        pixels.removeAll(keepingCapacity: true)
        fill(&pixels)
        if pixels.count != width * height { pixels = Array(repeating: 0, count: width * height) }
    }

    public var hasShape: Bool { !pixels.isEmpty }

    /// The rectangle the cursor covers when its hotspot is at (x, y).
    public func rect(pointerX x: Int, pointerY y: Int) -> PixelRect {
        PixelRect(x: x - hotX, y: y - hotY, width: width, height: height)
    }

    /// Blends the cursor into `frame` with its hotspot at (x, y) (capture coordinates) and remembers where;
    /// with `keepingPixelsBelow`, first keeps what it covers for ``restorePixelsBelow(in:)``.
    public mutating func draw(into frame: VideoFrame, pointerX x: Int, pointerY y: Int, keepingPixelsBelow: Bool = false) {
        let target = rect(pointerX: x, pointerY: y)
        let visible = target.intersection(frame.bounds)
        drawnRect = visible
        keptPixelsBelow = false
        guard !visible.isEmpty, !pixels.isEmpty else { return }
        let stride = frame.bytesPerRow
        if keepingPixelsBelow {
            let rowBytes = visible.width * 4
            if pixelsBelow.count < rowBytes * visible.height { pixelsBelow = Array(repeating: 0, count: rowBytes * visible.height) }
            // Neither buffer is empty here: the visible rectangle is not, and the kept pixels were sized to it.
            frame.withUnsafeMutableBytes { raw in
                pixelsBelow.withUnsafeMutableBytes { kept in
                    for row in 0..<visible.height {
                        let from = raw.baseAddress! + (visible.y + row) * stride + visible.x * 4
                        (kept.baseAddress! + row * rowBytes).copyMemory(from: from, byteCount: rowBytes)
                    }
                }
            }
            keptPixelsBelow = true
        }
        pixels.withUnsafeBufferPointer { cursor in
            frame.withUnsafeMutableBytes { raw in
                // The frame holds the (non-empty) visible rectangle, so its buffer has a base address.
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

    /// Puts back the pixels the last ``draw(into:pointerX:pointerY:keepingPixelsBelow:)`` covered (when it
    /// kept them) and returns that rectangle, or nil when nothing was drawn or kept.
    public mutating func restorePixelsBelow(in frame: VideoFrame) -> PixelRect? {
        defer { forgetDrawn() }
        guard keptPixelsBelow, !drawnRect.isEmpty, frame.bounds.intersection(drawnRect) == drawnRect else { return nil }
        let rowBytes = drawnRect.width * 4
        let stride = frame.bytesPerRow
        let rect = drawnRect
        // Neither buffer is empty: pixels were kept below a drawn, non-empty rectangle.
        frame.withUnsafeMutableBytes { raw in
            pixelsBelow.withUnsafeBytes { kept in
                for row in 0..<rect.height {
                    (raw.baseAddress! + (rect.y + row) * stride + rect.x * 4)
                        .copyMemory(from: kept.baseAddress! + row * rowBytes, byteCount: rowBytes)
                }
            }
        }
        return rect
    }

    public mutating func forgetDrawn() {
        drawnRect = PixelRect(x: 0, y: 0, width: 0, height: 0)
        keptPixelsBelow = false
    }
}
