import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ScreenMedia
@testable import ScreenRelay
import ScreenTesting
import Testing

/// A client holding no token cannot exhaust the relay's HTTP edge: every request head is timed and its size
/// bounded, before TLS and behind it, and what such clients cost the log is one line a minute.
@Suite(.watchdog()) struct RequestHeadTests {

    // MARK: The scanner, without sockets

    private func scanned(_ text: String, limits: RequestHeadScanner.Limits = .standard, byteByByte: Bool = false) -> RequestHeadScanner.Outcome {
        var scanner = RequestHeadScanner(limits: limits)
        guard byteByByte else { return scanner.scan(Array(text.utf8)) }
        var outcome = RequestHeadScanner.Outcome.unfinished
        for (index, byte) in text.utf8.enumerated() {
            outcome = scanner.scan([byte])
            if case .ended = outcome { return index == text.utf8.count - 1 ? outcome : .ended(after: -1) }
            if outcome != .unfinished { return outcome }
        }
        return outcome
    }

    @Test func theScannerFindsWhereAHeadEndsAndLeavesTheBodyAlone() {
        let head = "POST /session HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
        #expect(scanned(head + "hello") == .ended(after: head.utf8.count))
        #expect(scanned(head, byteByByte: true) == .ended(after: 1))
        // Lone LFs end lines too, and empty lines before the request line are skipped.
        #expect(scanned("GET / HTTP/1.1\nHost: x\n\nbody") == .ended(after: 24))
        #expect(scanned("\r\n\r\nGET / HTTP/1.1\r\n\r\n") == .ended(after: 22))
        #expect(scanned("GET / HTTP/1.1\r\nHost: x\r\n") == .unfinished)
        // Once ended, it stays so.
        var scanner = RequestHeadScanner(limits: .standard)
        _ = scanner.scan(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        #expect(scanner.scan(Array("more".utf8)) == .ended(after: 18))
    }

    @Test func theScannerRefusesALongRequestLineAndLongHeaderFieldsAtTheirLimits() {
        let limits = RequestHeadScanner.Limits(requestLine: 100, headerFields: 200)
        let line = { (length: Int) in "GET /" + String(repeating: "a", count: length - 14) + " HTTP/1.1" }
        #expect(line(100).utf8.count == 100)
        #expect(scanned(line(100) + "\r\n\r\n", limits: limits) == .ended(after: 104))
        #expect(scanned(line(101) + "\r\n\r\n", limits: limits) == .tooLong(.requestLine))
        #expect(scanned(line(101), limits: limits, byteByByte: true) == .tooLong(.requestLine))
        // Said as soon as the line passes its limit, whether or not it ever ends.
        #expect(scanned(line(100) + "a", limits: limits) == .tooLong(.requestLine))
        // Empty lines before it count towards it.
        #expect(scanned(String(repeating: "\r\n", count: 60), limits: limits) == .tooLong(.requestLine))
        // Header fields: 200 bytes in all, line ends and the closing empty line counted.
        let fields = { (length: Int) in "X: " + String(repeating: "b", count: length - 7) + "\r\n\r\n" }
        #expect(scanned("GET / HTTP/1.1\r\n" + fields(200), limits: limits) == .ended(after: 216))
        #expect(scanned("GET / HTTP/1.1\r\n" + fields(201), limits: limits) == .tooLong(.headerFields))
        #expect(scanned("GET / HTTP/1.1\r\n" + fields(201), limits: limits, byteByByte: true) == .tooLong(.headerFields))
        var many = "GET / HTTP/1.1\r\n"
        for index in 0..<40 { many += "X-\(index): v\r\n" }
        #expect(scanned(many, limits: limits) == .tooLong(.headerFields))
    }

    // MARK: The log

    @Test func aRepeatedLineIsSaidOnceAnIntervalWithTheNumberOfTheOthers() async throws {
        let capture = CapturedLog()
        let log = RateLimitedLog(logger: capture.logger(level: .info), interval: .seconds(2))
        for index in 0..<1234 { log.log("plain HTTP from \(index)") }
        #expect(capture.lines.count == 1)
        #expect(capture.lines.first == "plain HTTP from 0 (said at most once per 2 s)")
        #expect(try await eventually(30) { capture.lines.count == 2 })
        #expect(capture.lines.last == "plain HTTP from 1233 (1 233 more times in the last 2 s; said at most once per 2 s)")
        // The line opened the next interval: what comes within it waits for its end.
        log.log("again")
        #expect(capture.lines.count == 2)
        #expect(try await eventually(30) { capture.lines.count == 3 })
        #expect(capture.lines.last?.hasPrefix("again (1 more time in the last 2 s") == true)
        // After an interval with nothing, the next is said at once.
        try await Task.sleep(for: .milliseconds(2500))
        log.log("later")
        #expect(capture.lines.last == "later (said at most once per 2 s)")
        #expect(RateLimitedLog.grouped(1_234_567) == "1 234 567" && RateLimitedLog.grouped(999) == "999")
        #expect(RateLimitedLog.describe(.seconds(60), last: true) == "minute")
    }

    // MARK: Heads over the limits, with no token

    /// A head of about `bytes` (request line, Host, padding fields of 4 000 bytes at most, the empty line).
    static func head(bytes: Int, path: String = "/healthz") -> [UInt8] {
        var text = "GET \(path) HTTP/1.1\r\nHost: x\r\n"
        var index = 0
        while text.utf8.count < bytes - 2 {
            let room = bytes - 2 - text.utf8.count
            let prefix = "X-Pad-\(index): "
            text += prefix + String(repeating: "a", count: max(1, min(4000, room - prefix.utf8.count - 2))) + "\r\n"
            index += 1
        }
        return Array((text + "\r\n").utf8)
    }

    /// Everything the relay sends until it closes (or the socket's read timeout).
    private func answer(_ socket: RawSocket) async -> String {
        var bytes: [UInt8] = []
        while true {
            let chunk = await socket.receive()
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aRequestLineOver8KiBIsAnswered414AndClosed() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 600 }
        let socket = try RawSocket(port: relay.port, timeout: 20)
        await socket.send("GET /healthz?" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
        let answer = await answer(socket)
        #expect(answer.hasPrefix("HTTP/1.1 414 URI Too Long\r\n"), "\(answer)")
        #expect(answer.contains("Connection: close") && answer.hasSuffix("This relay reads request lines of at most 8 KiB.\n"))
        #expect(await socket.isClosedByPeer(within: 5))
        #expect(relay.server.metrics.value(.requestLineSize) == 1)
        // An 8 KiB head (one long field) is under both limits.
        let fine = try RawSocket(port: relay.port, timeout: 20)
        await fine.send(Self.head(bytes: 8 << 10))
        #expect(String(decoding: await fine.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    @Test(arguments: [40, 60, 100])
    func headsOver32KiBAreAnswered431AndClosedPromptly(kibibytes: Int) async throws {
        // No deadline within the test: what closes them is the refusal.
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 600; $0.idleTimeoutSeconds = 600 }
        let socket = try RawSocket(port: relay.port, timeout: 20)
        let started = ContinuousClock.now
        await socket.send(Self.head(bytes: kibibytes << 10))
        let answer = await answer(socket)
        #expect(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(answer)")
        #expect(answer.hasSuffix("This relay reads at most 32 KiB of request header fields.\n"))
        #expect(await socket.isClosedByPeer(within: 5))
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(relay.server.metrics.value(.requestHeadSize) == 1)
        #expect(try await relay.get("/healthz").0 == 200)
    }

    @Test func aHeadTheDecoderCannotReadIsAnswered400AndClosed() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 600; $0.idleTimeoutSeconds = 600 }
        let socket = try RawSocket(port: relay.port, timeout: 20)
        await socket.send("NOT HTTP AT ALL\r\n\r\n")
        #expect(await answer(socket).hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(await socket.isClosedByPeer(within: 5))
    }

    // MARK: Heads that never end

    @Test func aHeadTrickledOneByteASecondIsClosedAtTheDeadline() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 2; $0.idleTimeoutSeconds = 600 }
        let socket = try RawSocket(port: relay.port)
        await socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        let trickle = Task {
            for _ in 0..<60 {
                guard await socket.send("a") else { return }
                try await Task.sleep(for: .seconds(1))
            }
        }
        defer { trickle.cancel() }
        #expect(await socket.isClosedByPeer(within: 40))
        #expect(relay.server.metrics.value(.requestHeadTimeout) >= 1)
    }

    @Test func aSecondHeadOnAKeptAliveConnectionIsTimedFromItsFirstByte() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 2; $0.idleTimeoutSeconds = 600 }
        let socket = try RawSocket(port: relay.port)
        await socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: await socket.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        // Longer than the deadline between requests: that is the idle timeout's to judge.
        try await Task.sleep(for: .seconds(3))
        await socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: await socket.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        // A third whose head never ends: closed at the deadline, not after the 600 s idle timeout.
        await socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let trickle = Task {
            for index in 0..<60 {
                guard await socket.send("X-\(index): b\r\n") else { return }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { trickle.cancel() }
        #expect(await socket.isClosedByPeer(within: 40))
        #expect(relay.server.metrics.value(.requestHeadTimeout) >= 1)
    }

    @Test func aWebSocketIsTimedByItsPingsNotAsAHead() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 1 }
        let socket = try RawSocket(port: relay.port)
        #expect(await socket.upgradeToWebSocket().hasPrefix("HTTP/1.1 101"))
        // Past the head's deadline, and within hello's (10 s): still open.
        let closed = await socket.isClosedByPeer(within: 3)
        #expect(!closed)
        #expect(relay.server.metrics.value(.requestHeadTimeout) == 0)
    }

    // MARK: The same behind TLS

    private func tlsRelay(headTimeout: Double = 600) async throws -> RunningRelay {
        // The authority's files go with it: kept until the relay has read them.
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue()
        let relay = try await RunningRelay {
            $0.tls = RelayTLSFiles(certificateChain: issued.certificate, privateKey: issued.key)
            $0.requestHeadTimeoutSeconds = headTimeout
            $0.idleTimeoutSeconds = 600
        }
        withExtendedLifetime(authority) {}
        return relay
    }

    @Test func overTLSBigHeadsAreAnswered431AndLongLines414() async throws {
        let relay = try await tlsRelay()
        for (head, status) in [(Self.head(bytes: 100 << 10), "431"), (Array(("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n").utf8), "414")] {
            let socket = try await RawTLSSocket(port: relay.port)
            await socket.send(head)
            #expect(await socket.isClosedByPeer(within: 20))
            #expect(socket.received.hasPrefix("HTTP/1.1 \(status) "), "\(socket.received)")
        }
        let honest = try await RawTLSSocket(port: relay.port)
        await honest.send(Self.head(bytes: 8 << 10))
        #expect(try await eventually(20) { honest.received.hasPrefix("HTTP/1.1 200") })
        #expect(relay.server.metrics.value(.requestHeadSize) == 1 && relay.server.metrics.value(.requestLineSize) == 1)
    }

    @Test func overTLSHeadsThatNeverEndAndHandshakesThatNeverEndAreClosedAtTheDeadline() async throws {
        let relay = try await tlsRelay(headTimeout: 2)
        // A ClientHello that never comes whole.
        let stalled = try RawSocket(port: relay.port)
        await stalled.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00])
        // A first head trickled in.
        let trickled = try await RawTLSSocket(port: relay.port)
        await trickled.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8))
        // A kept-alive connection whose second head never ends.
        let keptAlive = try await RawTLSSocket(port: relay.port)
        await keptAlive.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try await eventually(20) { keptAlive.received.hasPrefix("HTTP/1.1 200") })
        await keptAlive.send(Array("GET /healthz HTTP/1.1\r\n".utf8))
        let trickle = Task {
            for index in 0..<60 {
                await trickled.send(Array("X-\(index): b\r\n".utf8))
                await keptAlive.send(Array("X-\(index): b\r\n".utf8))
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { trickle.cancel() }
        #expect(await stalled.isClosedByPeer(within: 40))
        #expect(await trickled.isClosedByPeer(within: 40))
        #expect(await keptAlive.isClosedByPeer(within: 40))
        #expect(relay.server.metrics.value(.requestHeadTimeout) >= 3)
    }

    // MARK: What it costs the log, and the honest clients

    @Test func plainHTTPToTheTLSPortAndRefusedUpgradesAreOneLineAMinute() async throws {
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue()
        let capture = CapturedLog()
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0, secret: RunningRelay.secret)
        configuration.tls = RelayTLSFiles(certificateChain: issued.certificate, privateKey: issued.key)
        configuration.requestHeadTimeoutSeconds = 1
        let tls = try await LoggedRelay(configuration, logger: capture.logger(level: .debug))
        withExtendedLifetime(authority) {}
        for _ in 0..<30 {
            let plain = try RawSocket(port: tls.port)
            await plain.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(await plain.isClosedByPeer(within: 10))
        }
        // Connections that say nothing, or go away at once, are closed without a line.
        var silent: [RawSocket] = []
        for _ in 0..<5 { silent.append(try RawSocket(port: tls.port)) }
        for _ in 0..<5 { _ = try RawSocket(port: tls.port) }
        for socket in silent { #expect(await socket.isClosedByPeer(within: 20)) }
        #expect(tls.server.metrics.value(.tlsHandshake) >= 30)

        var plainConfiguration = RelayConfiguration(host: "127.0.0.1", port: 0, secret: RunningRelay.secret)
        plainConfiguration.requestHeadTimeoutSeconds = 1
        let plain = try await LoggedRelay(plainConfiguration, logger: capture.logger(level: .debug))
        for _ in 0..<10 {
            let socket = try RawSocket(port: plain.port)
            #expect(await socket.upgradeToWebSocket(path: "/not-ws").hasPrefix("HTTP/1.1 400"))
            #expect(await socket.isClosedByPeer(within: 10))
        }
        for _ in 0..<10 {
            let socket = try RawSocket(port: plain.port)
            await socket.send(Self.head(bytes: 60 << 10))
            #expect(await socket.isClosedByPeer(within: 10))
        }
        try await Task.sleep(for: .milliseconds(500))
        let lines = capture.lines
        #expect(lines.filter { $0.contains("failed the TLS handshake") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.contains("refused a WebSocket upgrade") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.contains("header fields are longer than 32 KiB") }.count == 1, "\(lines)")
        #expect(!lines.contains { $0.contains("Error handling upgrade result") }, "\(lines)")
        #expect(capture.sources.allSatisfy { !$0.hasPrefix("Hummingbird") || $0 == "HummingbirdCore" }, "\(capture.sources)")
        // 60 connections refused, closed or answered 400 and 431: the two relays' start, and one line of each kind.
        #expect(lines.count < 20, "\(lines.joined(separator: "\n"))")
    }

    @Test func healthzKeepsAnsweringDuringAFloodOfBigHeads() async throws {
        let relay = try await RunningRelay()
        let answered = Locked(0)
        let flood = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        guard let socket = try? RawSocket(port: relay.port, timeout: 20) else { return }
                        await socket.send(Self.head(bytes: 100 << 10))
                        if String(decoding: await socket.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 431") { answered.withLock { $0 += 1 } }
                    }
                }
            }
        }
        var statuses: [Int] = []
        for _ in 0..<20 {
            statuses.append((try? await relay.get("/healthz").0) ?? 0)
            try await Task.sleep(for: .milliseconds(100))
        }
        await flood.value
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(answered.value == 200)
        #expect(relay.server.metrics.value(.requestHeadSize) == 200)
    }
}

/// A relay in this process whose log is the test's.
private final class LoggedRelay: Sendable {
    let server: RelayServer
    let port: Int
    private let task: Task<Void, any Error>

    init(_ configuration: RelayConfiguration, logger: Logger) async throws {
        let server = try await RelayServer(configuration: configuration, logger: logger)
        self.server = server
        task = Task { try await server.run() }
        port = try await server.waitUntilListening()
    }

    deinit { task.cancel() }
}

/// The lines a logger was given: their messages, and the modules they came from.
private final class CapturedLog: Sendable {
    private let entries = Locked<[(message: String, source: String)]>([])
    var lines: [String] { entries.value.map(\.message) }
    var sources: Set<String> { Set(entries.value.map(\.source)) }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "captured") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    struct Handler: LogHandler {
        let capture: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.entries.withLock { $0.append((event.message.description, event.source)) }
        }
    }
}

/// A TLS connection driven byte by byte (the relay's certificate not checked): an attacker's, behind TLS.
private final class RawTLSSocket: Sendable {
    private let channel: any Channel
    private let bytes: Locked<[UInt8]>
    private let closed: Locked<Bool>

    init(port: Int) async throws {
        let bytes = Locked<[UInt8]>([]), closed = Locked(false)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        let context = try NIOSSLContext(configuration: configuration)
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    try channel.pipeline.syncOperations.addHandler(Collector(bytes: bytes))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        channel.closeFuture.whenComplete { _ in closed.withLock { $0 = true } }
        self.bytes = bytes
        self.closed = closed
    }

    deinit { channel.close(promise: nil) }

    var received: String { String(decoding: bytes.value, as: UTF8.self) }

    func send(_ bytes: [UInt8]) async {
        try? await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    func isClosedByPeer(within seconds: Double) async -> Bool {
        (try? await eventually(seconds) { closed.value }) ?? false
    }

    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let bytes: Locked<[UInt8]>
        init(bytes: Locked<[UInt8]>) { self.bytes = bytes }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            bytes.withLock { $0 += buffer.readableBytesView }
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
