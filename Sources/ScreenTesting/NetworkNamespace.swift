import Foundation
import ScreenMedia

/// A network namespace of its own, joined to this one by a veth pair (10.77.N.1 on this side, 10.77.N.2 inside),
/// whose two directions can each be limited with `tbf` (this kernel has `tbf` and `htb`, no `netem`): a thin or
/// uneven link between a process started inside (``command(_:_:)``) and one outside. Nothing leaves the machine.
/// CLOCK_MONOTONIC is shared across namespaces, and the X server's filesystem socket is reachable from inside.
/// Needs root (`ip netns`); elsewhere ``init(prefix:)`` throws a failure that says so (`cannotStart`).
public final class NetworkNamespace: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The machine cannot make one (no root, no namespaces): tests skip, saying why.
        public let cannotStart: Bool
    }

    /// Which way traffic goes on the link.
    public enum Direction: Sendable {
        /// From this side into the namespace (shaped where it leaves: this side's interface).
        case intoNamespace
        /// From the namespace out (shaped on the namespace's interface).
        case outOfNamespace
    }

    public let name: String
    /// This side's address on the veth pair, and the namespace's.
    public let localAddress: String
    public let namespaceAddress: String
    private let hostInterface: String
    private var namespaceInterface: String { hostInterface + "n" }

    private static let counter = Locked(0)

    /// `prefix`: a short tag naming the namespaces of one kind of fixture (leftovers of dead test processes with
    /// it are removed first).
    public init(prefix: String = "spn") async throws {
        guard getuid() == 0 else { throw Failure(description: "network namespaces need root", cannotStart: true) }
        await Self.removeLeftovers(prefix: prefix)
        let index = Self.counter.withLock { value -> Int in
            value += 1
            return value
        }
        // One subnet and interface name per namespace: the process id spreads parallel test binaries apart.
        let subnet = (Int(getpid()) * 7 + index * 3 + prefix.utf8.reduce(0) { $0 + Int($1) }) % 250 + 1
        name = "\(prefix)-\(getpid())-\(index)"
        hostInterface = "\(prefix.prefix(3))\(getpid() % 100000)x\(index)"
        localAddress = "10.77.\(subnet).1"
        namespaceAddress = "10.77.\(subnet).2"
        let peer = hostInterface + "n"
        for command in [
            ["netns", "add", name],
            ["link", "add", hostInterface, "type", "veth", "peer", "name", peer],
            ["link", "set", peer, "netns", name],
            ["addr", "add", "\(localAddress)/24", "dev", hostInterface],
            ["link", "set", hostInterface, "up"],
            ["netns", "exec", name, "ip", "addr", "add", "\(namespaceAddress)/24", "dev", peer],
            ["netns", "exec", name, "ip", "link", "set", peer, "up"],
            ["netns", "exec", name, "ip", "link", "set", "lo", "up"],
        ] {
            let result = try await ChildProcess.run("/sbin/ip", command, timeout: 20)
            guard result.status == 0 else {
                await remove()
                // A machine that does not let us make namespaces or links (a container without the capability).
                throw Failure(
                    description: "ip \(command.joined(separator: " ")): \(result.standardError.trimmingCharacters(in: .whitespacesAndNewlines))",
                    cannotStart: true)
            }
        }
    }

    /// Limits `direction` to `kbps` (nil: no limit), at once, also while traffic flows. The token bucket holds
    /// 20 ms of the rate (at least 3000 bytes) and the queue at most `queueMilliseconds`; past it packets are
    /// dropped, which TCP sees as a congested link.
    public func limit(_ direction: Direction, kbps: Int?, queueMilliseconds: Int = 500) async throws {
        let device = direction == .intoNamespace ? hostInterface : namespaceInterface
        let prefix = direction == .intoNamespace ? [] : ["netns", "exec", name, "tc"]
        let tc = direction == .intoNamespace ? "/sbin/tc" : "/sbin/ip"
        var arguments = prefix
        if let kbps {
            let burst = max(3000, kbps * 1000 / 8 / 50)
            arguments += ["qdisc", "replace", "dev", device, "root", "tbf", "rate", "\(kbps)kbit", "burst", "\(burst)", "latency", "\(queueMilliseconds)ms"]
        } else {
            arguments += ["qdisc", "del", "dev", device, "root"]
        }
        let result = try await ChildProcess.run(tc, arguments, timeout: 20)
        // Removing a limit that is not there is not a failure.
        guard result.status == 0 || kbps == nil else {
            throw Failure(description: "tc \(arguments.joined(separator: " ")): \(result.standardError)", cannotStart: true)
        }
    }

    /// `executable` with `arguments`, to run inside the namespace (with ``ChildProcess``).
    public func command(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        ("/sbin/ip", ["netns", "exec", name, executable] + arguments)
    }

    /// Kills what still runs inside, then deletes the namespace, and with it the veth pair.
    public func remove() async {
        if let running = try? await ChildProcess.run("/sbin/ip", ["netns", "pids", name], timeout: 20) {
            for pid in running.standardOutput.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        }
        _ = try? await ChildProcess.run("/sbin/ip", ["netns", "delete", name], timeout: 20)
        _ = try? await ChildProcess.run("/sbin/ip", ["link", "delete", hostInterface], timeout: 20)
    }

    /// Namespaces of test processes that died before cleaning up (their veth goes with them).
    private static func removeLeftovers(prefix: String) async {
        guard let listing = try? await ChildProcess.run("/sbin/ip", ["netns", "list"], timeout: 20) else { return }
        for line in listing.standardOutput.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            let parts = name.split(separator: "-")
            guard parts.count == 3, parts[0] == prefix, let owner = Int32(parts[1]), kill(owner, 0) != 0, errno == ESRCH else { continue }
            _ = try? await ChildProcess.run("/sbin/ip", ["netns", "delete", name], timeout: 20)
        }
    }
}
