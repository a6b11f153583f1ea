/// Where a picture changed since it was last taken, as a source learns it piece by piece (XDamage events,
/// PipeWire's damage metadata): rectangles clipped to the picture, at most ``limit`` of them. Past the limit
/// they become their bounding box and ``overflowed`` says so (a source that can compare the picture in tiles,
/// ``TileDiff``, does that instead). Allocates nothing once its capacity is reserved.
public struct DamageRegion: Sendable {
    public let limit: Int
    public private(set) var rects: [PixelRect] = []
    /// More rectangles arrived than ``limit``: ``rects`` is their bounding box.
    public private(set) var overflowed = false

    public init(limit: Int = 32) {
        self.limit = limit
        rects.reserveCapacity(limit)
    }

    /// Adds `rect`, clipped to `bounds` (nothing when it lies outside).
    public mutating func add(_ rect: PixelRect, within bounds: PixelRect) {
        let clipped = rect.intersection(bounds)
        guard !clipped.isEmpty else { return }
        guard rects.count >= limit else {
            rects.append(clipped)
            return
        }
        var box = clipped
        for existing in rects { box = box.union(existing) }
        rects.removeAll(keepingCapacity: true)
        rects.append(box)
        overflowed = true
    }

    public mutating func removeAll() {
        rects.removeAll(keepingCapacity: true)
        overflowed = false
    }

    /// Marks the whole frame changed when its changed rectangles are many (over `limit`) or cover as much as the
    /// picture: converting and coding it whole then costs no more, and one rectangle is simpler to follow.
    public static func coalesce(_ frame: VideoFrame, limit: Int = 32) {
        var area = 0
        for rect in frame.changedRects { area += rect.width * rect.height }
        if frame.changedRects.count > limit || area >= frame.width * frame.height { frame.markAllChanged() }
    }
}
