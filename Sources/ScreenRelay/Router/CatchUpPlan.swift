/// Which of a stream's cached pictures take a subscriber that fell behind (or asked for a keyframe) to the newest
/// picture, or none when a fresh keyframe would serve it sooner. Pure: the router gives it the cache, what the
/// subscriber already has, and what its link carries.
///
/// Two ways reach the newest picture: the whole group of pictures from its keyframe, or — when the subscriber
/// already decoded that keyframe and every layer-0 frame up to the last one it was sent — only the frames it
/// missed since. The cheaper is taken. Every frame but the last goes as catch-up (decoded, not shown): the last
/// is newer than anything the subscriber holds, so it never shows the past as live.
struct CatchUpPlan: Equatable {
    /// A cached picture: its temporal layer, its size, and the router's count of the stream's frames when it came.
    struct Entry: Equatable {
        var layer: Int
        var bytes: Int
        var arrival: UInt64
    }

    /// Indices into the cache, in order.
    var indices: [Int]
    var bytes: Int
    /// It continues from the last frame sent instead of starting again at the keyframe.
    var continues: Bool

    /// The plan for a subscriber of `highestLayer` that was last sent the frame that arrived `lastSent` (nil:
    /// none), or nil when no plan is worth it: the cache is empty; the catch-up would cost more than
    /// `maximumBytes`; nothing in it is newer than what the subscriber has; or, on a link measured at
    /// `bytesPerSecond`, it would take longer than a fresh picture (`freshPictureMilliseconds`) would.
    static func make(
        cache: [Entry], highestLayer: Int, lastSent: UInt64?, maximumBytes: Int, bytesPerSecond: Double?, freshPictureMilliseconds: Double
    ) -> CatchUpPlan? {
        guard let keyframe = cache.first else { return nil }
        var group = CatchUpPlan(indices: [], bytes: 0, continues: false)
        var missed = CatchUpPlan(indices: [], bytes: 0, continues: true)
        // Continuing is sound only when the subscriber decoded this keyframe and everything of layer 0 since it
        // up to `lastSent`: it was sent the keyframe or an earlier one, and has skipped nothing since.
        let mayContinue = lastSent.map { keyframe.arrival <= $0 } ?? false
        for (index, entry) in cache.enumerated() where entry.layer <= highestLayer {
            group.indices.append(index)
            group.bytes += entry.bytes
            if mayContinue, let lastSent, entry.arrival > lastSent {
                missed.indices.append(index)
                missed.bytes += entry.bytes
            }
        }
        let cheapest = mayContinue && missed.bytes <= group.bytes ? missed : group
        guard let last = cheapest.indices.last, cheapest.bytes <= maximumBytes else { return nil }
        if let lastSent, cache[last].arrival <= lastSent { return nil }
        if let bytesPerSecond, bytesPerSecond > 0, Double(cheapest.bytes) / bytesPerSecond * 1000 > freshPictureMilliseconds { return nil }
        return cheapest
    }
}
