import Foundation

/// The address to put in links when the relay listens on a wildcard address (`0.0.0.0`, `::`), which no
/// client can connect to: this machine's first IPv4 address on an interface that is up and not loopback,
/// else its host name.
public enum ReachableAddress {
    static func replacingWildcard(_ host: String) -> String {
        guard ["0.0.0.0", "::", "", "*", "[::]"].contains(host) else { return host }
        return networkAddress() ?? hostName() ?? "127.0.0.1"
    }

    /// Whether a `Host` header can go into a link as it is: a host name or address and an optional port —
    /// nothing that could break out of a URL.
    static func isValidHost(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 261 else { return false }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_")
        guard host.allSatisfy(allowed.contains) else { return false }
        return !host.hasPrefix("0.0.0.0") && !host.hasPrefix("[::]")
    }

    /// The first IPv4 address of an up, non-loopback interface.
    public static func networkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    private static func hostName() -> String? {
        let name = ProcessInfo.processInfo.hostName
        return name.isEmpty || name == "localhost" ? nil : name
    }
}
