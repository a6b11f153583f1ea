import Synchronization

/// The relay's ceiling on what all its connections have queued, in bytes, under which each connection keeps a fair
/// share: while the total is under ``ceiling`` everything is admitted (each connection still has its own budget);
/// past it, a connection is refused only when it holds more than its share (``ceiling`` over the connections that
/// have something queued, and never less than ``minimumShare``), so that the connections that flood the relay are
/// closed and the honest ones, which hold little, go on.
///
/// Bytes are counted as queued: a frame queued for a thousand subscribers counts a thousand times, although it is one
/// shared buffer. The count is thus an upper bound of the memory queues hold, and the ceiling a bound on it.
final class QueuedBytesBudget: Sendable {
    /// `screenrelay --max-queued-bytes-relay`: 1 GiB counted.
    static let defaultCeiling = 1 << 30
    /// A connection holding no more than this is never refused for the relay's sake: a control message and a few
    /// frames always fit.
    static let minimumShare = 1 << 20

    let ceiling: Int
    private let total = Atomic<Int>(0)
    /// Connections with something queued: what the ceiling is shared among.
    private let holders = Atomic<Int>(0)

    init(ceiling: Int = QueuedBytesBudget.defaultCeiling) {
        self.ceiling = max(Self.minimumShare, ceiling)
    }

    /// Bytes queued to every connection now.
    var queuedBytes: Int { total.load(ordering: .relaxed) }

    /// What one connection may hold while the relay is at its ceiling.
    var share: Int { max(Self.minimumShare, ceiling / max(1, holders.load(ordering: .relaxed))) }

    /// Takes `bytes` for a connection that holds `holding` already; false (nothing taken) when the relay is past its
    /// ceiling and the connection past its share.
    func take(_ bytes: Int, holding: Int) -> Bool {
        let after = total.add(bytes, ordering: .relaxed).newValue
        if after > ceiling, holding + bytes > share {
            total.subtract(bytes, ordering: .relaxed)
            return false
        }
        if holding == 0, bytes > 0 { holders.add(1, ordering: .relaxed) }
        return true
    }

    /// Gives back `bytes` of a connection that now holds `remaining`.
    func release(_ bytes: Int, remaining: Int) {
        guard bytes > 0 else { return }
        total.subtract(bytes, ordering: .relaxed)
        if remaining == 0 { holders.subtract(1, ordering: .relaxed) }
    }
}
