import Foundation

/// A plain TCP connection driven byte by byte, for playing a misbehaving client: half-sent requests, crafted
/// WebSocket frames, sockets that never read. Its calls block (with timeouts) on a thread of their own, never
/// on the concurrency pool, which a relay in the same process needs.
public final class RawSocket: @unchecked Sendable {
    // @unchecked: one test task drives a socket at a time; the descriptor is only closed in deinit.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let descriptor: Int32

    /// Connects to `host:port` (IPv4), from `source` if given; reads wait at most `timeout` seconds.
    /// `receiveBuffer` (bytes) makes a reader the relay can fill at once.
    public init(host: String = "127.0.0.1", port: Int, source: String? = nil, timeout: Double = 30, receiveBuffer: Int? = nil) throws {
        // Kept in a local until connected: a class fully initialized when its init throws is deinitialized, and
        // deinit's close after the failure path's would close a descriptor number another connection may have
        // taken meanwhile (a relay in this process crashes on the accepted socket it finds closed).
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        if var receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = Self.address(source, port: 0)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(descriptor); throw Failure(description: "bind \(source): \(String(cString: strerror(errno)))") }
        }
        var remote = Self.address(host, port: port)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "connect \(host):\(port): \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Shuts its sending side (a FIN), as a client that went away without a close frame; it may still read.
    public func shutdownSending() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Resets the connection (an RST, as from a crashed client or a middlebox) and takes no more part in it: its
    /// reads and writes fail from now on. (The descriptor is closed at deinit, as ever: a reset socket stays open.)
    public func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        // A connect to AF_UNSPEC dissolves the association: with a zero linger, the kernel sends the RST now.
        var unspecified = sockaddr(sa_family: sa_family_t(AF_UNSPEC), sa_data: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        _ = connect(descriptor, &unspecified, socklen_t(MemoryLayout<sockaddr>.size))
    }

    private static func address(_ host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        return address
    }

    /// Runs a blocking call on a thread outside the concurrency pool.
    private func blocking<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Sends all of `bytes`; false when the peer has closed (or the send timed out).
    @discardableResult
    public func send(_ bytes: [UInt8]) async -> Bool {
        await blocking { self.sendNow(bytes) }
    }

    @discardableResult
    public func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    private func sendNow(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Up to `count` bytes; empty when the peer closed or nothing came within the timeout.
    public func receive(upTo count: Int = 65536) async -> [UInt8] {
        await blocking { self.receiveNow(upTo: count) }
    }

    private func receiveNow(upTo count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, count, 0) }
        return received > 0 ? Array(buffer.prefix(received)) : []
    }

    /// Exactly `count` bytes, or nil if the connection ends (or stalls past the timeout) first.
    private func receiveNow(exactly count: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let chunk = receiveNow(upTo: count - bytes.count)
            if chunk.isEmpty { return nil }
            bytes += chunk
        }
        return bytes
    }

    /// Whether the peer has closed the connection: a read returns end of file (or a reset) within `timeout`.
    public func isClosedByPeer(within timeout: Double) async -> Bool {
        await blocking { self.isClosedByPeerNow(within: timeout) }
    }

    private func isClosedByPeerNow(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            guard ready > 0 else { continue }
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        }
        return false
    }

    // MARK: WebSocket

    /// Sends a WebSocket upgrade for `path` (with `headers`, each line ending in CRLF) and reads the response head;
    /// returns its status line.
    public func upgradeToWebSocket(path: String = "/ws", host: String = "127.0.0.1", headers: String = "") async -> String {
        await blocking { self.upgradeNow(path: path, host: host, headers: headers) }
    }

    private func upgradeNow(path: String, host: String, headers: String) -> String {
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(headers)\r\n"
        guard sendNow(Array(request.utf8)) else { return "" }
        var head: [UInt8] = []
        while !head.ends(with: [13, 10, 13, 10]) {
            guard let byte = receiveNow(exactly: 1) else { break }
            head += byte
        }
        return String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
    }

    /// A masked client frame: `opcode` (1 text, 2 binary, 0 continuation, 8 close, 9 ping, 10 pong), FIN as given.
    /// `declaredLength` claims a payload length other than the bytes sent (for oversized-frame attacks); `masked:
    /// false` leaves the mask out, as no client may (RFC 6455 §5.1).
    public static func webSocketFrame(
        opcode: UInt8, fin: Bool = true, payload: [UInt8], declaredLength: Int? = nil, masked: Bool = true
    ) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let length = declaredLength ?? payload.count
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length < 126 {
            frame.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            frame += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            frame.append(maskBit | 127)
            frame += (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return frame + payload }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// One server frame: opcode and payload (servers do not mask); nil when the connection ends first.
    public func receiveWebSocketFrame() async -> WebSocketFrame? {
        await blocking { self.receiveFrameNow() }
    }

    public struct WebSocketFrame: Sendable {
        public var opcode: UInt8
        public var fin: Bool
        public var payload: [UInt8]
    }

    private func receiveFrameNow() -> WebSocketFrame? {
        guard let head = receiveNow(exactly: 2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let extended = receiveNow(exactly: 2) else { return nil }
            length = Int(extended[0]) << 8 | Int(extended[1])
        } else if length == 127 {
            guard let extended = receiveNow(exactly: 8) else { return nil }
            length = extended.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = length == 0 ? [] : receiveNow(exactly: length) else { return nil }
        return WebSocketFrame(opcode: head[0] & 0x0F, fin: head[0] & 0x80 != 0, payload: payload)
    }

    /// Reads frames until a close frame and returns its status code; nil if the connection ends without one.
    /// Pings are not answered.
    public func receiveCloseCode() async -> UInt16? {
        await blocking {
            while let frame = self.receiveFrameNow() {
                if frame.opcode == 8 {
                    return frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : 1005
                }
            }
            return nil
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
