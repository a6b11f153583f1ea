import CX11Shims
import CX11
import Logging

/// Reads pixels of a drawable into an image: MIT-SHM (`XShmGetImage`, ~1 ms for 1080p) when the server
/// allows it, else `XGetImage` (~12 ms and an allocation per grab).
final class ImageGrabber {
    private let connection: X11Connection
    private var sharedImage: OpaquePointer?
    private var plainImage: UnsafeMutablePointer<XImage>?
    let width: Int
    let height: Int
    let usesSharedMemory: Bool

    init(connection: X11Connection, width: Int, height: Int, preferSharedMemory: Bool, logger: Logger) throws(X11CaptureError) {
        self.connection = connection
        self.width = width
        self.height = height
        var shared: OpaquePointer? = nil
        if preferSharedMemory {
            if XShmQueryExtension(connection.display) == 0 {
                logger.warning("the X server has no MIT-SHM extension; capturing with XGetImage (slower)")
            } else {
                var xError: Int32 = 0
                shared = CX11Shims_shmImageCreate(
                    connection.display, XDefaultVisual(connection.display, connection.screen),
                    XDefaultDepth(connection.display, connection.screen), Int32(width), Int32(height), &xError)
                if shared == nil {
                    logger.warning(
                        "MIT-SHM is unavailable (X error \(xError): a remote or sandboxed client?); capturing with XGetImage (slower)")
                }
            }
        }
        sharedImage = shared
        usesSharedMemory = shared != nil
        if let shared {
            try Self.checkFormat(CX11Shims_shmImageXImage(shared))
        }
    }

    deinit {
        if let sharedImage { CX11Shims_shmImageDestroy(connection.display, sharedImage) }
        if let plainImage { CX11Shims_destroyImage(plainImage) }
    }

    /// Grabs `width × height` pixels of `drawable` at (x, y). Returns the X error code on failure (0 = none).
    func grab(_ drawable: Drawable, x: Int, y: Int) -> Int32 {
        if let sharedImage {
            return CX11Shims_shmImageGet(connection.display, drawable, sharedImage, Int32(x), Int32(y))
                ? 0 : max(1, CX11Shims_takeXError())
        }
        if let plainImage { CX11Shims_destroyImage(plainImage) }
        plainImage = nil
        _ = CX11Shims_takeXError()
        plainImage = XGetImage(
            connection.display, drawable, Int32(x), Int32(y), UInt32(width), UInt32(height), ~0, ZPixmap)
        let code = CX11Shims_takeXError()
        guard let plainImage else { return max(code, 1) }
        if (try? Self.checkFormat(plainImage)) == nil { return 255 }
        return 0
    }

    /// Lends the last grabbed pixels (BGRX, 32 bits per pixel) and their row stride.
    func withPixels<Result>(_ body: (UnsafeRawPointer, Int) -> Result) -> Result? {
        let image = sharedImage.flatMap { CX11Shims_shmImageXImage($0) } ?? plainImage
        guard let image, let data = image.pointee.data else { return nil }
        return body(UnsafeRawPointer(data), Int(image.pointee.bytes_per_line))
    }

    private static func checkFormat(_ image: UnsafeMutablePointer<XImage>) throws(X11CaptureError) {
        let pixels = image.pointee
        guard pixels.bits_per_pixel == 32, pixels.byte_order == LSBFirst, pixels.red_mask == 0xFF0000,
            pixels.green_mask == 0xFF00, pixels.blue_mask == 0xFF
        else {
            throw X11CaptureError(
                .unsupportedVisual,
                "the X screen uses a \(pixels.depth)-bit visual with \(pixels.bits_per_pixel) bits per pixel; "
                    + "screenpub captures 24/32-bit TrueColor screens (BGRX)")
        }
    }
}

@available(*, unavailable, message: "uses an Xlib Display, which belongs to one thread at a time")
extension ImageGrabber: Sendable {}
