public import Foundation
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle

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
