public import Foundation
import NIOCore
import NIOPosix

/// The control socket of a running service: a Unix socket in `$XDG_RUNTIME_DIR`, mode 0600, so only the same
/// user reaches it. One request per connection: the client writes one JSON line `{"command":"…"}`, the service
/// answers one JSON line and closes. Specified in docs/protocol.md ("Control socket").
public enum ControlSocket {
    /// `$XDG_RUNTIME_DIR/APPLICATION.sock`; nil without a runtime directory (then there is no control socket
    /// unless one is named).
    public static func defaultPath(application: String, environment: [String: String]) -> String? {
        guard let directory = environment["XDG_RUNTIME_DIR"], directory.hasPrefix("/") else { return nil }
        return "\(directory)/\(application).sock"
    }

    /// The largest request or reply accepted.
    static let maximumMessage = 64 * 1024

    /// Sends `command` and returns the reply's JSON bytes. Throws ``ServiceError`` (`.controlSocket`) when nothing answers.
    public static func send(_ command: String, to path: String, timeout: Duration = .seconds(10)) async throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ServiceError(.controlSocket, "no screenpub is running (no control socket at \(path))")
        }
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ServiceError(.controlSocket, "no screenpub answers at \(path) (\(error)); it may have stopped")
        }
        let request = try JSONEncoder().encode(["command": command]) + Data("\n".utf8)
        return try await withThrowingTaskGroup(of: Data.self) { group in
            group.addTask {
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(ByteBuffer(bytes: request))
                    var reply = Data()
                    for try await chunk in inbound {
                        reply.append(contentsOf: chunk.readableBytesView)
                        if reply.count > maximumMessage { throw ServiceError(.controlSocket, "the reply is too large") }
                        if reply.last == UInt8(ascii: "\n") { break }
                    }
                    guard !reply.isEmpty else { throw ServiceError(.controlSocket, "the service closed the control connection without answering") }
                    return reply
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ServiceError(.controlSocket, "no answer on \(path) within \(timeout)")
            }
            // Both tasks were added: the first to end answers, or throws (the timeout always throws).
            guard let reply = try await group.next() else { throw ServiceError(.controlSocket, "no answer on \(path)") }
            group.cancelAll()
            return reply
        }
    }

    /// Waits until the service that owned `path` has gone (its socket removed or refusing), up to `timeout`.
    /// Returns whether it went.
    public static func waitUntilGone(_ path: String, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !isAnswering(path) { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Whether a process accepts connections on the socket at `path`.
    static func isAnswering(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}

