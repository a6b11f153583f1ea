public import Foundation
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle

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

/// Serves the control socket until the service group shuts down; removes the socket file when it ends.
public struct ControlServer: Service {
    /// What the service answers to a command, and what it does once the answer is sent (`stop` shuts down).
    public struct Reply: Sendable {
        public var json: Data
        public var afterwards: (@Sendable () async -> Void)?

        public init(json: Data, afterwards: (@Sendable () async -> Void)? = nil) {
            self.json = json
            self.afterwards = afterwards
        }
    }
    public typealias Handler = @Sendable (_ command: String) async -> Reply

    public let path: String
    private let logger: Logger
    private let handle: Handler

    /// Claims `path` (removing a stale socket left by a process that died; refusing one that still answers),
    /// so that problems show before the service starts.
    public init(path: String, logger: Logger, handle: @escaping Handler) throws(ServiceError) {
        self.path = path
        self.logger = logger
        self.handle = handle
        // A directory we cannot create the socket in fails here, before any capture or recording starts.
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if access(directory.isEmpty ? "/" : directory, W_OK | X_OK) != 0 {
            throw ServiceError(.controlSocket, "cannot create the control socket \(path): \(String(cString: strerror(errno))) (\(directory))")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw ServiceError(.controlSocket, "\(path) exists and is not a socket; remove it or choose another --control-socket")
            }
            if ControlSocket.isAnswering(path) {
                throw ServiceError(.controlSocket, "another screenpub is already running with the control socket \(path)")
            }
            unlink(path)
        }
    }

    public func run() async throws {
        // Connections are handed over as plain channels, not reading (autoRead off), and wrapped for async use by
        // the task that serves them: a connection accepted while screenpub stops may never be served, and a
        // wrapped one that is dropped unserved is a crash in NIO ("Deinited NIOAsyncWriter without calling
        // finish()") — which `screenpub stop` followed by another command used to hit.
        let server: NIOAsyncChannel<any Channel, Never>
        // Created as 0600 from the start: no moment in which another user could connect.
        let previousMask = umask(0o177)
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(.autoRead, value: false)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false) { channel in
                    channel.eventLoop.makeSucceededFuture(channel)
                }
            umask(previousMask)
        } catch {
            umask(previousMask)
            throw ServiceError(.controlSocket, "cannot listen on the control socket \(path): \(error)")
        }
        chmod(path, 0o600)
        logger.debug("control socket at \(path)")
        defer { unlink(path) }
        let handle = self.handle
        let logger = self.logger
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await Self.serve(connection, handle: handle, logger: logger) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private static func serve(_ channel: any Channel, handle: Handler, logger: Logger) async {
        var afterwards: (@Sendable () async -> Void)?
        do {
            let connection = try await channel.eventLoop.submit {
                let wrapped = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return wrapped
            }.get()
            try await connection.executeThenClose { inbound, outbound in
                var request = Data()
                for try await chunk in inbound {
                    request.append(contentsOf: chunk.readableBytesView)
                    if request.last == UInt8(ascii: "\n") || request.count > ControlSocket.maximumMessage { break }
                }
                let reply: Reply
                if let command = try? JSONDecoder().decode([String: String].self, from: request)["command"] {
                    reply = await handle(command)
                } else {
                    reply = Reply(json: Data(#"{"ok":false,"error":"a request is one JSON line: {\"command\":\"status\"}"}"#.utf8))
                }
                try await outbound.write(ByteBuffer(bytes: reply.json + Data("\n".utf8)))
                afterwards = reply.afterwards
            }
        } catch {
            channel.close(promise: nil)
            logger.debug("control connection failed: \(error)")
        }
        await afterwards?()
    }
}
