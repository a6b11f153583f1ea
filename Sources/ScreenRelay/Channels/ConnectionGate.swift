import Foundation
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

    /// Descriptors this process has open, and its limit; nil where /proc is not there.
    static func descriptorUse() -> (open: Int, limit: Int)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0,
            let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        else { return nil }
        return (open, Int(clamping: limit.rlim_cur))
    }

    /// The largest total cap this process can keep: its descriptor limit (raised to the hard limit first)
    /// less room for the relay's own files, archives and outgoing connections.
    static func affordableConnections(_ wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let available = Int(clamping: limit.rlim_cur)
        return max(1, min(wanted, available - max(64, available / 8)))
    }
}
