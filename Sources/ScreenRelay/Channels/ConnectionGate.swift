import NIOCore
import ScreenMedia

/// Counts the relay's open TCP connections and refuses those past its caps — all of them, and those from one
/// address — so that a flood of idle sockets can never use up the descriptors honest clients and the relay's
/// own files need. Loopback addresses have no per-address cap: a reverse proxy on this machine carries every
/// remote viewer through one of them.
final class ConnectionGate: Sendable {
    struct Limits: Sendable {
        var total: Int
        var perAddress: Int
    }

    enum Refusal: Equatable {
        case total, perAddress
    }

    let limits: Limits
    private let state = Locked<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(limits: Limits) {
        self.limits = limits
    }

    /// Takes a place for a connection from `address`; nil when admitted (give it back with ``release(_:)``).
    func admit(_ address: SocketAddress?) -> Refusal? { admit(client: Self.key(address)) }

    func release(_ address: SocketAddress?) { release(client: Self.key(address)) }

    /// Takes a place for a connection from the client at `key` (an address; nil: one without a per-address cap);
    /// nil when admitted (give it back with ``release(client:)``).
    func admit(client key: String?) -> Refusal? {
        state.withLock { state in
            guard state.total < limits.total else { return .total }
            if let key {
                let count = state.byAddress[key, default: 0]
                guard count < limits.perAddress else { return .perAddress }
                state.byAddress[key] = count + 1
            }
            state.total += 1
            return nil
        }
    }

    func release(client key: String?) {
        state.withLock { state in
            state.total -= 1
            if let key {
                let count = state.byAddress[key, default: 1] - 1
                state.byAddress[key] = count > 0 ? count : nil
            }
        }
    }

    var open: Int { state.value.total }

    /// The per-address key: the IP address; nil for loopback and Unix sockets (no per-address cap).
    private static func key(_ address: SocketAddress?) -> String? {
        guard let address, let ip = address.ipAddress else { return nil }
        if ip == "::1" || ip.hasPrefix("127.") || ip.hasPrefix("::ffff:127.") { return nil }
        return ip
    }
}
