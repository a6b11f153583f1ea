/// The covered areas of one frame and how they look; the encoders paint them over the picture they read,
/// which is the only copy of the pixels that leaves the process.
public struct FrameCovers: Sendable, Equatable {
    /// Areas of the frame, inside its bounds. Capacity is kept between frames.
    public var rects: [PixelRect] = []
    public var style: CoverStyle = .solid
    /// How many of ``rects`` are windows (`--mask-window` matches) rather than regions.
    public var windowCount = 0

    public init() { rects.reserveCapacity(16) }

    public var isEmpty: Bool { rects.isEmpty }

    /// Sets the covers to the parts of `areas` inside `bounds`, `windows` of them windows. Returns whether they
    /// changed; unchanged covers are left as they are (the encoder keeps a copy of the previous ones, and
    /// writing equal ones would copy them anew).
    public mutating func set(_ areas: [PixelRect], windows: Int = 0, within bounds: PixelRect) -> Bool {
        let clipped = areas.map { $0.intersection(bounds) }.filter { !$0.isEmpty }
        guard clipped != rects || windows != windowCount else { return false }
        rects = clipped
        windowCount = windows
        return true
    }
}
