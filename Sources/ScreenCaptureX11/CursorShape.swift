import CX11
import ScreenMedia

extension CursorOverlay {
    /// Loads the current cursor shape from XFixes (premultiplied ARGB in `unsigned long`s).
    mutating func reloadShape(_ display: OpaquePointer) {
        guard let image = XFixesGetCursorImage(display) else { return }
        defer { XFree(image) }
        let cursor = image.pointee
        setShape(width: Int(cursor.width), height: Int(cursor.height), hotX: Int(cursor.xhot), hotY: Int(cursor.yhot)) { pixels in
            // Keep the low 32 bits of each `unsigned long`.
            for index in 0..<(Int(cursor.width) * Int(cursor.height)) { pixels.append(UInt32(truncatingIfNeeded: cursor.pixels[index])) }
        }
    }
}
