import Foundation

/// The address to put in links when the relay listens on a wildcard address (`0.0.0.0`, `::`), which no
/// client can connect to: this machine's network address (``networkAddress()``), else its host name.
public enum ReachableAddress {
    static func isWildcard(_ host: String) -> Bool { ["0.0.0.0", "::", "", "*", "[::]"].contains(host) }

    static func replacingWildcard(_ host: String) -> String {
        guard isWildcard(host) else { return host }
        return networkAddress() ?? hostName() ?? "127.0.0.1"
    }

    /// Whether a host name or address (no port, no brackets) is this machine's loopback: `localhost`, `::1`, an
    /// IPv4 address in 127/8, or one mapped into IPv6 (`::ffff:127.…`).
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" { return true }
        let v4 = host.hasPrefix("::ffff:") ? host.dropFirst(7) : Substring(host)
        let parts = v4.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// Whether a `Host` header can go into a link as it is: a host name or address and an optional port —
    /// nothing that could break out of a URL.
    static func isValidHost(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 261 else { return false }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_")
        guard host.allSatisfy(allowed.contains) else { return false }
        return !host.hasPrefix("0.0.0.0") && !host.hasPrefix("[::]")
    }

    /// This machine's IPv4 address that other machines reach it by: the source address of its default route
    /// (found by connecting a UDP socket, which sends nothing), else the first address of an interface that is
    /// up, running and not loopback (so an unplugged bridge such as docker0 is not picked before the LAN).
    public static func networkAddress() -> String? {
        defaultRouteAddress() ?? interfaceAddress()
    }

    private static func defaultRouteAddress() -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A documentation address (RFC 5737): the route to it is the default route; no packet is sent.
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = UInt16(9).bigEndian
        remote.sin_addr.s_addr = inet_addr("198.51.100.1")
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &remote) { remotePointer in
            withUnsafeMutablePointer(to: &local) { localPointer in
                remotePointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { remoteAddress in
                    localPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { localAddress in
                        connect(descriptor, remoteAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                            && getsockname(descriptor, localAddress, &length) == 0
                    }
                }
            }
        }
        guard found, local.sin_addr.s_addr != 0, UInt32(bigEndian: local.sin_addr.s_addr) >> 24 != 127 else { return nil }
        return numericHost(of: &local)
    }

    private static func interfaceAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        let wanted = Int32(IFF_UP) | Int32(IFF_RUNNING)
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & wanted == wanted, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var copy = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            if let name = numericHost(of: &copy) { return name }
        }
        return nil
    }

    /// Every address of this machine's interfaces that are up (IPv4 and IPv6, loopback too, without a zone),
    /// and its host name: the names a client on this machine or its networks may reach the relay by.
    static func machineNames() -> [String] {
        var names: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0, let first = list {
            defer { freeifaddrs(list) }
            for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
                guard let address = entry.pointee.ifa_addr, Int32(entry.pointee.ifa_flags) & Int32(IFF_UP) != 0 else { continue }
                let family = Int32(address.pointee.sa_family)
                guard family == AF_INET || family == AF_INET6 else { continue }
                let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
                var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                guard getnameinfo(address, length, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
                let text = String(nullTerminated: name)
                names.append(String(text.split(separator: "%", maxSplits: 1).first ?? Substring(text)))
            }
        }
        if let name = hostName() { names.append(name) }
        return names
    }

    private static func numericHost(of address: inout sockaddr_in) -> String? {
        var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, socklen_t(MemoryLayout<sockaddr_in>.size), &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard status == 0 else { return nil }
        return String(nullTerminated: name)
    }

    private static func hostName() -> String? {
        let name = ProcessInfo.processInfo.hostName
        return name.isEmpty || name == "localhost" ? nil : name
    }
}
