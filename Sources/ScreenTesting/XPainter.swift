import CX11Shims
import CX11
import Foundation
public import ScreenMedia

/// A minimal X client that draws known content for capture tests: solid windows, filled rectangles, resizes.
/// It has its own connection and belongs to one thread.
public final class XPainter {
    private let display: OpaquePointer
    private let screen: Int32
    public let root: UInt

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(displayName: String) throws {
        CX11Shims_installXErrorHandlers()
        guard let display = XOpenDisplay(displayName) else {
            throw Failure(description: "cannot open \(displayName)")
        }
        CX11Shims_watchDisplay(display)
        self.display = display
        screen = XDefaultScreen(display)
        root = UInt(XRootWindow(display, screen))
    }

    deinit {
        // Closing waits for the server's answer (XSync): on a thread of its own, not the concurrency-pool thread
        // the painter is released on. Nothing else holds the connection once the painter is gone.
        nonisolated(unsafe) let display = display
        Thread.detachNewThread {
            if !CX11Shims_xConnectionLost(display) { XCloseDisplay(display) }
            CX11Shims_forgetDisplay(display)
        }
    }

    /// Packs 8-bit red, green, blue into a TrueColor pixel value.
    public static func pixel(red: UInt8, green: UInt8, blue: UInt8) -> UInt {
        UInt(red) << 16 | UInt(green) << 8 | UInt(blue)
    }

    /// Creates, maps and shows an override-redirect window (no window manager needed) filled with `color`.
    @discardableResult
    public func createWindow(_ rect: PixelRect, color: UInt) -> UInt {
        var attributes = XSetWindowAttributes()
        attributes.override_redirect = 1
        attributes.background_pixel = color
        let window = XCreateWindow(
            display, Window(root), Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height), 0,
            XDefaultDepth(display, screen), UInt32(InputOutput), XDefaultVisual(display, screen),
            UInt(CWOverrideRedirect | CWBackPixel), &attributes)
        XMapRaised(display, window)
        fill(window: UInt(window), PixelRect(x: 0, y: 0, width: rect.width, height: rect.height), color: color)
        return UInt(window)
    }

    /// Creates and maps an application window (managed by a window manager, when one runs) with a WM_CLASS and a
    /// title, its background `color` (painted by the server the moment it is mapped, as a real application's
    /// first frame would be).
    @discardableResult
    public func createApplicationWindow(_ rect: PixelRect, color: UInt, instance: String, class className: String, title: String) -> UInt {
        var attributes = XSetWindowAttributes()
        attributes.background_pixel = color
        let window = XCreateWindow(
            display, Window(root), Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height), 0,
            XDefaultDepth(display, screen), UInt32(InputOutput), XDefaultVisual(display, screen), UInt(CWBackPixel), &attributes)
        instance.withCString { instanceName in
            className.withCString { classText in
                var hint = XClassHint(res_name: UnsafeMutablePointer(mutating: instanceName), res_class: UnsafeMutablePointer(mutating: classText))
                XSetClassHint(display, window, &hint)
            }
        }
        setTitle(window: UInt(window), title)
        // Where the test put it, also under a window manager (which otherwise may place it as it likes).
        var hints = XSizeHints()
        hints.flags = PPosition | USPosition
        hints.x = Int32(rect.x)
        hints.y = Int32(rect.y)
        XSetWMNormalHints(display, window, &hints)
        XMapRaised(display, window)
        sync()
        return UInt(window)
    }

    /// Sets WM_NAME and _NET_WM_NAME.
    public func setTitle(window: UInt, _ title: String) {
        XStoreName(display, Window(window), title)
        let bytes = Array(title.utf8)
        XChangeProperty(
            display, Window(window), XInternAtom(display, "_NET_WM_NAME", 0), XInternAtom(display, "UTF8_STRING", 0), 8,
            PropModeReplace, bytes, Int32(bytes.count))
        sync()
    }

    public func move(window: UInt, x: Int, y: Int) {
        XMoveWindow(display, Window(window), Int32(x), Int32(y))
        sync()
    }

    /// The window's parent: the root, or a window manager's frame once the window is managed.
    public func parent(of window: UInt) -> UInt {
        var rootReturn: Window = 0, parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(display, Window(window), &rootReturn, &parent, &children, &count) != 0 else { return 0 }
        if let children { XFree(children) }
        return UInt(parent)
    }

    public func raise(window: UInt) {
        XRaiseWindow(display, Window(window))
        sync()
    }

    public func lower(window: UInt) {
        XLowerWindow(display, Window(window))
        sync()
    }

    public func unmap(window: UInt) {
        XUnmapWindow(display, Window(window))
        sync()
    }

    public func map(window: UInt) {
        XMapRaised(display, Window(window))
        sync()
    }

    /// Fills a rectangle of `window` (the root when nil) with `color`.
    public func fill(window: UInt? = nil, _ rect: PixelRect, color: UInt) {
        let target = Window(window ?? root)
        let gc = XCreateGC(display, target, 0, nil)
        XSetForeground(display, gc, color)
        XFillRectangle(display, target, gc, Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height))
        XFreeGC(display, gc)
        sync()
    }

    /// Draws `text` in the server's built-in `fixed` font with its baseline at (x, y) of `window` (the root when nil).
    public func drawText(window: UInt? = nil, _ text: String, x: Int, y: Int, color: UInt, background: UInt) {
        let target = Window(window ?? root)
        let gc = XCreateGC(display, target, 0, nil)
        XSetForeground(display, gc, color)
        XSetBackground(display, gc, background)
        let bytes = Array(text.utf8).map { CChar(bitPattern: $0) }
        XDrawImageString(display, target, gc, Int32(x), Int32(y), bytes, Int32(bytes.count))
        XFreeGC(display, gc)
    }

    /// Moves the contents of `window` up by `lines` pixels (a terminal scrolling) and clears the freed strip.
    public func scrollUp(window: UInt, width: Int, height: Int, by lines: Int, background: UInt) {
        let target = Window(window)
        let gc = XCreateGC(display, target, 0, nil)
        XCopyArea(display, target, target, gc, 0, Int32(lines), UInt32(width), UInt32(height - lines), 0, 0)
        XSetForeground(display, gc, background)
        XFillRectangle(display, target, gc, 0, Int32(height - lines), UInt32(width), UInt32(lines))
        XFreeGC(display, gc)
    }

    public func resize(window: UInt, width: Int, height: Int, color: UInt) {
        XResizeWindow(display, Window(window), UInt32(width), UInt32(height))
        sync()
        fill(window: window, PixelRect(x: 0, y: 0, width: width, height: height), color: color)
    }

    public func destroy(window: UInt) {
        XDestroyWindow(display, Window(window))
        sync()
    }

    public func movePointer(x: Int, y: Int) {
        XWarpPointer(display, 0, Window(root), 0, 0, 0, 0, Int32(x), Int32(y))
        sync()
    }

    public func sync() { XSync(display, 0) }

    /// Runs `body` with the server grabbed (no other client's request, a capture included, is served in the
    /// meantime), so that what it draws appears at once.
    public func atomically(_ body: () -> Void) {
        XGrabServer(display)
        body()
        XUngrabServer(display)
        sync()
    }

    /// Copies `rect` of `window` (the root when nil) into `frame` (resized to the rectangle), with XGetImage.
    public func read(window: UInt? = nil, _ rect: PixelRect, into frame: VideoFrame) throws {
        guard let image = XGetImage(
            display, Window(window ?? root), Int32(rect.x), Int32(rect.y), UInt32(rect.width), UInt32(rect.height),
            UInt(bitPattern: -1), ZPixmap)
        else { throw Failure(description: "XGetImage of \(rect) failed") }
        defer { CX11Shims_destroyImage(image) }
        guard image.pointee.bits_per_pixel == 32, let data = image.pointee.data else {
            throw Failure(description: "the display's pixels are not 32-bit")
        }
        frame.resize(width: rect.width, height: rect.height)
        let sourceStride = Int(image.pointee.bytes_per_line)
        // The frame was just sized to the (non-empty) rectangle, so its buffer has a base address.
        frame.withUnsafeMutableBytes { pixels in
            for row in 0..<rect.height {
                (pixels.baseAddress! + row * frame.bytesPerRow).copyMemory(
                    from: UnsafeRawPointer(data) + row * sourceStride, byteCount: rect.width * 4)
            }
        }
    }
}

@available(*, unavailable, message: "an Xlib Display belongs to one thread at a time")
extension XPainter: Sendable {}

extension XPainter {
    /// Shows ``TestPattern/fillColouredLines(_:)`` in a window covering `rect` (columns counted from the screen's
    /// left edge, as ``TestPattern/colouredLineError(_:in:)`` reads them) and returns the window.
    @discardableResult
    public func showColouredLines(_ rect: PixelRect) -> UInt {
        let background = TestPattern.lineBackground
        let window = createWindow(rect, color: Self.pixel(red: background.r, green: background.g, blue: background.b))
        for x in rect.x..<rect.maxX {
            guard let colour = TestPattern.lineColour(x: x) else { continue }
            fill(window: window, PixelRect(x: x - rect.x, y: 0, width: 1, height: rect.height), color: Self.pixel(red: colour.r, green: colour.g, blue: colour.b))
        }
        return window
    }
}
