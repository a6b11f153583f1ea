import Foundation

/// The process's file descriptor limit, which bounds how many connections the relay can hold: the total cap of the
/// ``ConnectionGate`` is fitted under it, and the housekeeping warns as it is neared.
enum DescriptorLimit {
    /// Descriptors this process has open, and its limit; nil where /proc is not there.
    static func use() -> (open: Int, limit: Int)? {
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
