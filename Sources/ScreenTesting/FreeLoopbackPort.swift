import Foundation
import Glibc

/// A TCP port free on 127.0.0.1 right now (for a program that must be told its port, such as a WebDriver
/// server; it may be taken again before that program binds it, so callers try again on failure).
public func freeLoopbackPort() throws -> Int {
    let (descriptor, port) = try boundLoopbackSocket()
    close(descriptor)
    return port
}

/// A port on 127.0.0.1 where nothing listens for as long as this is held: a socket bound to it that never listens,
/// so a connection there is refused and no other socket of this machine can take the port (a port freed by
/// closing a server may be bound again at once by another test's server running beside).
public final class RefusingLoopbackPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        (descriptor, port) = try boundLoopbackSocket()
    }

    deinit { close(descriptor) }
}

/// A TCP socket bound to a port of 127.0.0.1 the kernel chose (no SO_REUSEADDR: no other socket can bind it while
/// it is open), and that port.
private func boundLoopbackSocket() throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw FreeLoopbackPortFailure(description: "no socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw FreeLoopbackPortFailure(description: "no free port: \(reason)")
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

struct FreeLoopbackPortFailure: Error, CustomStringConvertible {
    let description: String
}
