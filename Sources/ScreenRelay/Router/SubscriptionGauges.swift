/// A stream's subscriptions as the session samples and reports them: those whose links are timed closely
/// (``RoutedSubscription/watchedClosely(topLayer:)``) and how many get each layer (nil: waiting for a keyframe).
/// Kept as each subscription changes (``RoutedStream/note(_:_:)``), so that the session's tick reads them without
/// walking a thousand subscriptions ten times a second.
struct SubscriptionGauges: Equatable {
    /// What a subscription counts as.
    struct Reading: Equatable {
        var watched: Bool
        var layer: Int?
    }

    private(set) var watched: Set<String> = []
    private(set) var byLayer: [Int?: Int] = [:]

    /// `id` counted as `reading` now, in place of `before` (nil: not counted yet).
    mutating func change(_ id: String, from before: Reading?, to reading: Reading) {
        if let before { remove(id, before) }
        if reading.watched { watched.insert(id) }
        byLayer[reading.layer, default: 0] += 1
    }

    /// `id` is no longer counted (it was as `reading`).
    mutating func remove(_ id: String, _ reading: Reading) {
        if reading.watched { watched.remove(id) }
        let left = byLayer[reading.layer, default: 0] - 1
        byLayer[reading.layer] = left > 0 ? left : nil
    }
}
