import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// An HTTP/1.1 server on a loopback port for one test. It reads each connection's request — its head, and the
/// body its Content-Length announces unless told to answer on the head alone — keeps it, and answers with the
/// raw bytes its script returns: a well-formed answer, a broken one, or none.
final class ScriptedHTTPServer: Sendable {
    struct Request: Sendable {
        /// The request line and header lines, without the blank line that ends them.
        var head: String
        var body: [UInt8]

        var requestLine: String { lines[0] }

        /// The header lines, as sent.
        var headerLines: [String] { Array(lines.dropFirst()) }

        private var lines: [String] { head.components(separatedBy: "\r\n") }

        /// The first value of header `name` (compared ignoring case).
        func header(_ name: String) -> String? {
            for line in headerLines {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    enum Answer: Sendable {
        /// These bytes, then the connection closes.
        case bytes([UInt8])
        /// Nothing: the connection stays open until the server stops.
        case silence
        /// The connection closes with no answer.
        case close

        /// A whole answer with `status`, `headers` and `body`.
        static func http(_ status: Int, _ headers: [(String, String)] = [], body: [UInt8] = []) -> Answer {
            var head = "HTTP/1.1 \(status) Scripted\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            return .bytes(Array(head.utf8) + body)
        }

        static func json(_ status: Int, _ text: String) -> Answer {
            http(status, [("Content-Type", "application/json")], body: Array(text.utf8))
        }
    }

    let port: Int
    private let channel: any Channel
    private let log = RequestLog()

    /// What it has been sent so far, one request a connection.
    var requests: [Request] { log.requests.withLock { $0 } }

    /// Listens on `host`; `answerOnHead`: answers as soon as a request's head has come, reading none of its body.
    init(host: String = "127.0.0.1", answerOnHead: Bool = false, _ script: @escaping @Sendable (Request) -> Answer) async throws {
        let log = self.log
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RequestReader(answerOnHead: answerOnHead, script: script, record: { request in log.requests.withLock { $0.append(request) } }))
                }
            }
            .bind(host: host, port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Stops listening (connections already taken go on).
    func stop() async throws { try await channel.close() }

    deinit { channel.close(promise: nil) }

    private final class RequestLog: Sendable {
        let requests = Mutex<[Request]>([])
    }
}

/// Reads one request from a connection and answers it as the script says.
private final class RequestReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answerOnHead: Bool
    private let script: @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Answer
    private let record: @Sendable (ScriptedHTTPServer.Request) -> Void
    private var received: [UInt8] = []
    private var answered = false

    init(
        answerOnHead: Bool, script: @escaping @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Answer,
        record: @escaping @Sendable (ScriptedHTTPServer.Request) -> Void
    ) {
        self.answerOnHead = answerOnHead
        self.script = script
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard !answered else { return }
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard let headEnd = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        var request = ScriptedHTTPServer.Request(head: String(decoding: received[..<headEnd.lowerBound], as: UTF8.self), body: [])
        let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
        let body = received[headEnd.upperBound...]
        guard answerOnHead || body.count >= length else { return }
        request.body = Array(body.prefix(length))
        answered = true
        record(request)
        switch script(request) {
        case .bytes(let bytes):
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).whenComplete { _ in channel.close(promise: nil) }
        case .silence:
            break
        case .close:
            context.close(promise: nil)
        }
    }
}
