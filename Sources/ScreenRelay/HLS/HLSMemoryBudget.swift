import Synchronization

/// The bytes every session's HLS holds in memory (its listed and lately retired segments), against the relay's
/// budget for them: a packager whose segments would take the total past it drops its oldest ones first.
final class HLSMemoryBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int = RelayConfiguration.defaults.hlsRelayMemoryBytes) { self.limit = limit }

    var bytesInUse: Int { used.load(ordering: .relaxed) }

    /// Changes one packager's share from `old` to `new` bytes; returns how far the total is over the limit (0 when
    /// within it).
    func update(from old: Int, to new: Int) -> Int {
        let total = used.add(new - old, ordering: .relaxed).newValue
        return max(0, total - limit)
    }
}
