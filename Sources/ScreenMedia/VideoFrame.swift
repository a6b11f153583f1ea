/// Pixel layouts a frame can hold. Only BGRA (libyuv's "ARGB": B, G, R, A bytes in memory) for now,
/// the format of the seed's `OTPixelFormatARGB` on a little-endian machine.
public enum PixelFormat: String, Sendable, Hashable {
    case bgra

    public var bytesPerPixel: Int { 4 }
}

/// How the frame must be rotated to be shown upright (the seed's `OTVideoOrientation`).
public enum VideoOrientation: String, Sendable, Hashable {
    case up, down, left, right
}

/// Heap memory for pixels with exactly one owner. Released on deinit; its address is stable.
final class PixelStorage {
    let pointer: UnsafeMutableRawPointer
    let byteCount: Int

    init(byteCount: Int) {
        self.byteCount = byteCount
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
    }

    deinit { pointer.deallocate() }
}

/// One captured picture: BGRA pixels in storage the frame owns and reuses, plus its timing and metadata.
///
/// A source keeps one frame and refills it every tick; storage is reallocated only when the size grows,
/// so the capture path does not allocate per frame. A frame is lent to consumers for the duration of a
/// call and belongs to one thread at a time, so it is not `Sendable`.
public final class VideoFrame {
    public let format: PixelFormat
    public private(set) var width: Int
    public private(set) var height: Int
    /// Bytes from the start of one row to the start of the next.
    public private(set) var bytesPerRow: Int
    /// Capture time on the monotonic clock.
    public var captureTime: MediaTime = .zero
    /// Capture time on the wall clock.
    public var wallClock: WallClockTime = WallClockTime(secondsSince1970: 0, nanoseconds: 0)
    public var metadata: FrameMetadata = .empty
    public var orientation: VideoOrientation = .up
    /// The parts that changed since the previous frame from the same source; the whole frame when unknown.
    /// Capacity is kept between frames.
    public var changedRects: [PixelRect] = []
    /// Areas that must not leave the machine (``PrivacyMask``): the encoders cover them in every picture they
    /// code. A change of the covers is a change of the picture: the areas they leave or take are coded again.
    public var covers = FrameCovers()

    private var storage: PixelStorage

    public init(width: Int, height: Int, format: PixelFormat = .bgra) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.format = format
        self.width = width
        self.height = height
        self.bytesPerRow = width * format.bytesPerPixel
        self.storage = PixelStorage(byteCount: bytesPerRow * height)
        changedRects.reserveCapacity(64)
        markAllChanged()
    }

    public var bounds: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }

    /// Changes the frame's size, reusing the storage when it is large enough. Returns whether the size changed.
    @discardableResult
    public func resize(width: Int, height: Int) -> Bool {
        precondition(width > 0 && height > 0, "frame size must be positive")
        guard width != self.width || height != self.height else { return false }
        let rowBytes = width * format.bytesPerPixel
        if rowBytes * height > storage.byteCount { storage = PixelStorage(byteCount: rowBytes * height) }
        self.width = width
        self.height = height
        self.bytesPerRow = rowBytes
        markAllChanged()
        return true
    }

    public func markAllChanged() {
        changedRects.removeAll(keepingCapacity: true)
        changedRects.append(bounds)
    }

    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: bytesPerRow * height))
    }

    public func withUnsafeMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: bytesPerRow * height))
    }

    /// The BGRA pixel at (x, y) as (b, g, r, a).
    public func pixel(x: Int, y: Int) -> (b: UInt8, g: UInt8, r: UInt8, a: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel outside the frame")
        let base = storage.pointer.advanced(by: y * bytesPerRow + x * 4).assumingMemoryBound(to: UInt8.self)
        return (base[0], base[1], base[2], base[3])
    }
}

@available(*, unavailable, message: "a VideoFrame belongs to one thread; copy the pixels to share them")
extension VideoFrame: Sendable {}
