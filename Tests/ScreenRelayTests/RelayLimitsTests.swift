import Foundation
import ScreenMedia
@testable import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenWire
import Testing

/// Each limit of docs/protocol.md ("Limits a connection meets") met by a raw client on loopback: it is closed
/// (or refused) with the documented reason, the refusal is counted at /metrics, and the relay goes on serving.
@Suite(.watchdog()) struct RelayLimitsTests {
    /// A raw WebSocket on `relay` that has said hello with a token of `role` and read its welcome.
    private func helloSocket(_ relay: RunningRelay, role: Role, session: RunningRelay.SessionCreated? = nil) async throws -> RawSocket {
        let session = if let session { session } else { try await relay.createSession() }
        let token = role == .publisher ? session.token : try await relay.token(session: session.sessionId, role: role)
        let socket = try RawSocket(port: relay.port)
        #expect(await socket.upgradeToWebSocket().contains("101"))
        await socket.send(RawSocket.webSocketFrame(opcode: 1, payload: Array(ControlMessage.hello(token: token, client: "raw").encoded().utf8)))
        guard let welcome = await socket.receiveWebSocketFrame(), String(decoding: welcome.payload, as: UTF8.self).contains("welcome") else {
            throw TestFailure("no welcome")
        }
        return socket
    }

    @Test func anOversizedMessageBeforeHelloIsRefusedAfterItsFirstFrame() async throws {
        let relay = try await RunningRelay()
        // A frame that claims 8 MiB: refused on its header, nothing of it is buffered.
        let claims = try RawSocket(port: relay.port)
        #expect(await claims.upgradeToWebSocket().contains("101"))
        await claims.send(RawSocket.webSocketFrame(opcode: 2, payload: [UInt8](repeating: 1, count: 1000), declaredLength: 8 << 20))
        let code = await claims.receiveCloseCode()
        let closed = await claims.isClosedByPeer(within: 5)
        #expect(code == 1009 || closed)
        // Fragments that add up past 64 KiB before hello: closed with 1009 (message too big).
        let fragments = try RawSocket(port: relay.port)
        #expect(await fragments.upgradeToWebSocket().contains("101"))
        await fragments.send(RawSocket.webSocketFrame(opcode: 1, fin: false, payload: [UInt8](repeating: 0x61, count: 60_000)))
        await fragments.send(RawSocket.webSocketFrame(opcode: 0, fin: false, payload: [UInt8](repeating: 0x61, count: 60_000)))
        #expect(await fragments.receiveCloseCode() == 1009)
        #expect(relay.server.metrics.value(.messageSize) >= 1)
        #expect(try await relay.get("/healthz").0 == 200)
    }

    /// Empty continuation frames, as fast as a client can send them, would cost the relay a step each forever (both
    /// cores with a dozen connections): a message comes in at most a fragment a KiB of its limit, and 16 more.
    @Test func aMessageOfEmptyFragmentsIsClosedAtItsFragmentBound() async throws {
        let relay = try await RunningRelay()
        let socket = try RawSocket(port: relay.port)
        #expect(await socket.upgradeToWebSocket().contains("101"))
        await socket.send(RawSocket.webSocketFrame(opcode: 1, fin: false, payload: Array("{".utf8)))
        let empty = RawSocket.webSocketFrame(opcode: 0, fin: false, payload: [])
        _ = await socket.send(Array([[UInt8]](repeating: empty, count: 200).joined()))
        let code = await socket.receiveCloseCode()
        #expect(code == 1008)
        #expect(WebSocketMessageReader.maximumFragments(limit: 64 << 10) == 80)
    }

    @Test func aViewerCannotSendMegabytes() async throws {
        let relay = try await RunningRelay()
        let viewer = try await helloSocket(relay, role: .subscriber)
        await viewer.send(RawSocket.webSocketFrame(opcode: 2, fin: false, payload: [UInt8](repeating: 0, count: 65_000)))
        await viewer.send(RawSocket.webSocketFrame(opcode: 0, payload: [UInt8](repeating: 0, count: 65_000)))
        #expect(await viewer.receiveCloseCode() == 1009)
        // A publisher may: its media frames are larger (here 200 KB, a bad header after that: malformed, 1002).
        let publisher = try await helloSocket(relay, role: .publisher)
        await publisher.send(RawSocket.webSocketFrame(opcode: 2, fin: false, payload: [UInt8](repeating: 0, count: 65_536)))
        await publisher.send(RawSocket.webSocketFrame(opcode: 0, fin: false, payload: [UInt8](repeating: 0, count: 65_536)))
        await publisher.send(RawSocket.webSocketFrame(opcode: 0, payload: [UInt8](repeating: 0, count: 65_536)))
        #expect(await publisher.receiveCloseCode() == 1002)
    }

    @Test func aMessageThatTricklesInIsClosedAtItsDeadline() async throws {
        let relay = try await RunningRelay { $0.messageDeadlineSeconds = 1 }
        let publisher = try await helloSocket(relay, role: .publisher)
        let started = ContinuousClock.now
        await publisher.send(RawSocket.webSocketFrame(opcode: 2, fin: false, payload: [UInt8](repeating: 0, count: 100)))
        // Pongs keep it alive, but the message never completes.
        #expect(await publisher.receiveCloseCode() == 1008)
        #expect(ContinuousClock.now - started < .seconds(40))
        #expect(relay.server.metrics.value(.messageDeadline) == 1)
    }

    @Test func textThatIsNotUTF8ClosesWith1007() async throws {
        let relay = try await RunningRelay()
        let viewer = try await helloSocket(relay, role: .subscriber)
        await viewer.send(RawSocket.webSocketFrame(opcode: 1, payload: [0x7B, 0xC3, 0x28, 0x7D]))
        #expect(await viewer.receiveCloseCode() == 1007)
    }

    @Test func headersThatTrickleInAreCutOffAndHonestRequestsAreServed() async throws {
        let relay = try await RunningRelay { $0.requestHeadTimeoutSeconds = 1 }
        let slow = try RawSocket(port: relay.port)
        await slow.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let trickling = Task {
            for _ in 0..<30 {
                guard await slow.send("X-A: b\r\n") else { return }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let silent = try RawSocket(port: relay.port)
        #expect(await silent.isClosedByPeer(within: 30))
        #expect(await slow.isClosedByPeer(within: 30))
        trickling.cancel()
        #expect(relay.server.metrics.value(.requestHeadTimeout) >= 2)
        // A request whose head is complete is served, on a kept-alive connection too, however long its answer takes.
        let honest = try RawSocket(port: relay.port)
        await honest.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: await honest.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        try await Task.sleep(for: .milliseconds(1500))
        await honest.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: await honest.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    @Test func idleConnectionsAreClosed() async throws {
        let relay = try await RunningRelay { $0.idleTimeoutSeconds = 2 }
        // Kept alive after a request, then silent: closed after the idle timeout.
        let keptAlive = try RawSocket(port: relay.port)
        await keptAlive.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(String(decoding: await keptAlive.receive(), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        #expect(await keptAlive.isClosedByPeer(within: 30))
        // A WebSocket that never answers the relay's pings: closed.
        let deaf = try await helloSocket(relay, role: .subscriber)
        #expect(await deaf.isClosedByPeer(within: 30))
    }

    @Test func connectionsPastTheCapAreClosedAtOnceAndCounted() async throws {
        // Held connections stay (no request-head deadline within the test), whatever the machine's load.
        let relay = try await RunningRelay { $0.maximumConnections = 20; $0.requestHeadTimeoutSeconds = 600 }
        var held: [RawSocket] = []
        for _ in 0..<20 { held.append(try RawSocket(port: relay.port)) }
        try await Task.sleep(for: .milliseconds(200))
        let refused = try RawSocket(port: relay.port)
        #expect(try await eventually(20) { relay.server.metrics.value(.totalConnections) == 1 })
        #expect(await Self.closedCount(held + [refused]) == 1)
        // Once the held ones go, there is room again.
        held.removeAll()
        #expect(try await eventually(20) { (try? await relay.get("/healthz").0) == 200 })
    }

    @Test func connectionsFromOneAddressAreCappedButLoopbackIsNot() async throws {
        // The per-address cap needs an address that is not loopback: this machine's own, if it has one.
        let relay = try await RunningRelay { $0.host = "0.0.0.0"; $0.maximumConnectionsPerAddress = 5; $0.requestHeadTimeoutSeconds = 600 }
        var loopback: [RawSocket] = []
        for _ in 0..<10 { loopback.append(try RawSocket(port: relay.port)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(relay.server.metrics.value(.connectionsPerAddress) == 0)
        guard let address = ReachableAddress.networkAddress() else {
            try Test.cancel("this machine has no network address besides loopback: the per-address cap cannot be tried")
        }
        // Six at once: one of them (whichever the relay set up last) is closed.
        var remote: [RawSocket] = []
        for _ in 0..<6 { remote.append(try RawSocket(host: address, port: relay.port, source: address)) }
        #expect(try await eventually(20) { relay.server.metrics.value(.connectionsPerAddress) == 1 })
        #expect(await Self.closedCount(remote) == 1)
    }

    /// How many of `sockets` the relay has closed, once it has closed one (or after 20 s).
    static func closedCount(_ sockets: [RawSocket]) async -> Int {
        var closed = Set<Int>()
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            for (index, socket) in sockets.enumerated() where !closed.contains(index) {
                if await socket.isClosedByPeer(within: 0.05) { closed.insert(index) }
            }
        } while closed.isEmpty && ContinuousClock.now < deadline
        return closed.count
    }

    @Test func sessionsAreCapped() async throws {
        let relay = try await RunningRelay { $0.maximumSessions = 3 }
        for _ in 0..<3 { _ = try await relay.createSession() }
        let (status, body) = try await relay.post("/session")
        #expect(status == 503)
        #expect(String(decoding: body, as: UTF8.self).contains("max-sessions"))
        #expect(relay.server.metrics.value(.sessionCap) == 1)
    }

    @Test func sessionsWithoutClientsExpireAndThoseWithOneStay() async throws {
        // (Long enough for the viewer to join its session first on a loaded machine.)
        let relay = try await RunningRelay { $0.emptySessionExpirySeconds = 4 }
        let used = try await relay.createSession()
        let viewer = try await helloSocket(relay, role: .subscriber, session: used)
        let empty = try await relay.createSession()
        #expect(try await eventually(30) { relay.server.metrics.value(.sessions) == 1 })
        #expect(try await relay.token(session: used.sessionId, role: .subscriber).isEmpty == false)
        #expect(try await relay.post("/session/\(empty.sessionId)/token", json: ["role": "subscriber"]).0 == 404)
        _ = viewer
    }

    @Test func streamsPerConnectionAndStreamNamesAreBounded() async throws {
        let relay = try await RunningRelay { $0.maximumStreamsPerConnection = 2; $0.maximumStreamNameBytes = 16 }
        let session = try await relay.createSession()
        let replies = try await RelayClient.connect(url: relay.webSocketURL, token: session.token, logger: quietLogger) { link, events in
            _ = try await events.nextControl()
            var errors: [String] = []
            for name in ["one", "two", "three", String(repeating: "n", count: 17)] {
                try await link.send(.publish(name: name, properties: TestMedia.properties))
                if case .error(_, let message)? = try await events.nextControl() { errors.append(message) }
            }
            return errors
        }
        #expect(replies == ["a connection publishes at most 2 streams at once", "a stream name is at most 16 bytes"])
        #expect(relay.server.metrics.value(.streamsPerConnection) == 1)
        #expect(relay.server.metrics.value(.streamName) == 1)
    }

    @Test func metricsCanRequireAToken() async throws {
        let relay = try await RunningRelay { $0.metricsToken = "metrics-reader" }
        #expect(try await relay.get("/metrics").0 == 401)
        let (status, body) = try await relay.request("GET", "/metrics", secret: "metrics-reader")
        #expect(status == 200)
        #expect(String(decoding: body, as: UTF8.self).contains(#"screenrelay_refused_total{limit="metrics_token"} 1"#))
    }

    /// DNS rebinding and cross-site WebSockets: a Host that is none of the relay's names gets 421, a WebSocket
    /// from a page of another site is not opened (400), and both are counted; the relay's own names are served.
    @Test func foreignHostsAndOriginsAreRefused() async throws {
        let relay = try await RunningRelay()
        func head(_ request: String) async throws -> String {
            let socket = try RawSocket(port: relay.port)
            await socket.send(request)
            return String(decoding: await socket.receive(), as: UTF8.self)
        }
        #expect(try await head("GET /view/x HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 421"))
        #expect(try await head("GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(try await head("GET /healthz HTTP/1.1\r\nHost: localhost:\(relay.port)\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        let upgrade = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(relay.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        let foreign = try await head(upgrade + "Origin: http://evil.example\r\n\r\n")
        // Hummingbird answers a refused upgrade 400 whatever the reason: the WebSocket is not opened.
        #expect(foreign.hasPrefix("HTTP/1.1 400"), "\(foreign)")
        #expect(try await head(upgrade + "Origin: http://127.0.0.1:\(relay.port)\r\n\r\n").hasPrefix("HTTP/1.1 101"))
        #expect(relay.server.metrics.value(.host) == 1)
        #expect(relay.server.metrics.value(.origin) == 1)
    }
}
