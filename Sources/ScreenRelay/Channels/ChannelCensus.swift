import NIOCore
import ScreenMedia

/// The channels of the connections a relay has accepted that still exist, open or closed, held weakly: what a
/// connection costs must go with it once it has closed, and a channel still alive long after its close is a
/// leak (as the WebSocket request contexts were, ``RelayRequestContext``). Counted for tests
/// (ConnectionLeakTests), and closed at the end of a shutdown's grace: one lock and one entry a connection, the
/// dead entries dropped as the list doubles.
final class ChannelCensus: Sendable {
    private struct Entry: Sendable {
        weak var channel: (any Channel)?
    }

    private let state = Locked<(entries: [Entry], pruneAt: Int)>(([], 64))

    func add(_ channel: any Channel) {
        state.withLock { state in
            state.entries.append(Entry(channel: channel))
            guard state.entries.count >= state.pruneAt else { return }
            state.entries.removeAll { $0.channel == nil }
            state.pruneAt = max(64, 2 * state.entries.count)
        }
    }

    /// Closes every channel still open: at the end of the shutdown's grace, those no session holds too (a client
    /// with no token, an HTTP request still being answered).
    func closeAll() {
        let channels = state.withLock { state in state.entries.compactMap(\.channel) }
        for channel in channels { channel.close(promise: nil) }
    }

    /// How many of the channels added still exist.
    var alive: Int {
        state.withLock { state in
            state.entries.removeAll { $0.channel == nil }
            state.pruneAt = max(64, 2 * state.entries.count)
            return state.entries.count
        }
    }
}
