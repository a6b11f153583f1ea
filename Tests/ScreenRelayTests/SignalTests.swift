import Foundation
import ScreenMedia
@testable import ScreenRelay
import ScreenSession
import ScreenTransport
import ScreenWire
import ScreenTesting
import Testing

/// Signals (text chat): the router's rules, then over real WebSockets and the HTTP API.
@Suite(.watchdog()) struct SignalTests {
    typealias Router = StreamRouter<String>

    func controls(_ actions: [Router.Action], to connection: String) -> [ControlMessage] {
        actions.compactMap { if case .sendControl(let message, connection) = $0 { message } else { nil } }
    }

    func session(publishersMaySignal: Bool = true) -> Router {
        var router = Router(sessionId: "s", publishersMaySignal: publishersMaySignal)
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: "screen of Ada"))
        _ = router.connect(ConnectionInfo(connectionId: "a", role: .subscriber, data: "name=Bo"))
        _ = router.connect(ConnectionInfo(connectionId: "b", role: .subscriber, data: ""))
        // Their arrivals told, so that what follows is only the signals.
        _ = router.flushMembership(now: 0)
        return router
    }

    @Test func aSignalToEveryoneReachesEveryConnectionWithItsSender() {
        var router = session()
        let actions = router.handle(.signal(Signal(type: "chat", data: "hello", from: "forged", fromData: "forged")), from: "a", now: 0)
        let delivered = Signal(type: "chat", data: "hello", from: "a", fromData: "name=Bo")
        for connection in ["p", "a", "b"] {
            #expect(controls(actions, to: connection) == [.signal(delivered)], "\(connection)")
        }
    }

    @Test func aSignalToOneReachesOnlyThatConnection() {
        var router = session()
        let actions = router.handle(.signal(Signal(type: "chat", data: "psst", to: "b")), from: "p", now: 0)
        #expect(controls(actions, to: "b") == [.signal(Signal(type: "chat", data: "psst", to: "b", from: "p", fromData: "screen of Ada"))])
        #expect(controls(actions, to: "a").isEmpty)
        #expect(controls(actions, to: "p").isEmpty)
        let nobody = router.handle(.signal(Signal(type: "chat", data: "?", to: "gone")), from: "a", now: 0)
        #expect(controls(nobody, to: "a").map(\.type) == ["error"])
    }

    @Test func overLimitSignalsAreRefusedWithACodeAndNotFatally() {
        var router = session()
        let cases: [(Signal, String)] = [
            (Signal(type: String(repeating: "t", count: 129), data: ""), "type over 128"),
            (Signal(type: "", data: "x"), "empty type"),
            (Signal(type: "chat message", data: "x"), "space in type"),
            (Signal(type: "çhat", data: "x"), "non-ASCII type"),
            (Signal(type: "chat", data: String(repeating: "d", count: 8 * 1024 + 1)), "data over 8 KB"),
        ]
        for (signal, name) in cases {
            let actions = router.handle(.signal(signal), from: "a", now: 0)
            guard case .sendControl(.error(let code, _), "a")? = actions.first, actions.count == 1 else {
                Issue.record("\(name): \(actions)")
                continue
            }
            #expect(code == .invalidSignal, "\(name)")
        }
        // At the limits exactly: accepted.
        let longest = Signal(type: String(repeating: "A", count: 128) , data: String(repeating: "é", count: 4096))
        #expect(controls(router.handle(.signal(longest), from: "a", now: 0), to: "b").count == 1)
        #expect(controls(router.handle(.signal(Signal(type: "a-Z_0~9", data: "")), from: "a", now: 0), to: "b").count == 1)
    }

    @Test func publishersCanBeBarredFromSignalling() {
        var router = session(publishersMaySignal: false)
        let refused = router.handle(.signal(Signal(type: "chat", data: "hi")), from: "p", now: 0)
        guard case .sendControl(.error(.forbidden, _), "p")? = refused.first else { Issue.record("\(refused)"); return }
        #expect(controls(router.handle(.signal(Signal(type: "chat", data: "hi")), from: "a", now: 0), to: "p").count == 1)
    }

    @Test func theServerSignalsAsNobody() throws {
        let router = session()
        let actions = try router.serverSignal(Signal(type: "notice", data: "closing at 5", from: "a"))
        #expect(controls(actions, to: "b") == [.signal(Signal(type: "notice", data: "closing at 5"))])
        #expect(throws: WireError.self) { try router.serverSignal(Signal(type: "bad type", data: "")) }
        #expect(throws: WireError.self) { try router.serverSignal(Signal(type: "x", data: "", to: "nobody")) }
    }

    @Test func signalsRoundTripOnTheWire() throws {
        let signal = ControlMessage.signal(Signal(type: "chat", data: "hi \"there\"", to: "c1", from: "c2", fromData: "n"))
        #expect(try ControlMessage.parse(signal.encoded()) == signal)
        #expect(signal.encoded().contains(#""signalType":"chat""#))
        #expect(throws: WireError.self) { try ControlMessage.parse(#"{"v":1,"type":"signal","data":"no type"}"#) }
    }

    // MARK: Over the wire

    @Test
    func twoSubscribersAndAPublisherChat() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let tokenA = try await relay.token(session: session.sessionId, role: .subscriber, data: "name=A")
        let tokenB = try await relay.token(session: session.sessionId, role: .subscriber, data: "name=B")

        /// Joins, waits until `ready` others are there, runs `act`, and collects signals until `expected` arrived.
        @Sendable func participant(
            _ token: String, transport: TransportKind, expected: Int, act: @escaping @Sendable (RelayLink, [ConnectionInfo]) async throws -> Void
        ) async throws -> (me: String, received: [Signal]) {
            try await RelayClient.connect(transport: transport.to(relay), token: token, logger: quietLogger) { link, events in
                guard case .welcome(let me, _, _, _, var others, _)? = try await events.nextControl() else { throw TestFailure("no welcome") }
                while others.count < 2 {
                    if case .connectionCreated(let connection)? = try await events.nextControl(where: { if case .connectionCreated = $0 { true } else { false } }) {
                        others.append(connection)
                    }
                }
                try await act(link, others)
                var received: [Signal] = []
                while received.count < expected, let event = try await events.next() {
                    if case .control(.signal(let signal)) = event { received.append(signal) }
                    if case .control(.error(let code, _)) = event { received.append(Signal(type: "error-\(code.rawValue)", data: "")) }
                }
                return (me, received)
            }
        }
        // A: says hello to all, then sends an over-long one (refused, connection stays), then "bye" to all.
        // B: sends a private line to the publisher. Publisher: says hi to all.
        async let a = participant(tokenA, transport: .webSocket, expected: 4) { link, _ in
            try await link.send(.signal(Signal(type: "chat", data: "hello from A")))
            try await link.send(.signal(Signal(type: "chat", data: String(repeating: "x", count: 9000))))
            try await link.send(.signal(Signal(type: "chat", data: "bye from A")))
        }
        async let b = participant(tokenB, transport: .inProcess, expected: 3) { link, others in
            let publisher = try #require(others.first { $0.role == .publisher })
            try await link.send(.signal(Signal(type: "chat", data: "psst", to: publisher.connectionId)))
        }
        async let p = participant(session.token, transport: .webSocket, expected: 4) { link, _ in
            try await link.send(.signal(Signal(type: "chat", data: "hi from the screen")))
        }
        let (resultA, resultB, resultP) = try await (a, b, p)
        func lines(_ signals: [Signal]) -> Set<String> { Set(signals.map { "\($0.type) \($0.data.prefix(20)) \($0.fromData ?? "-")" }) }
        // A's own lines come back to it; the refusal did not end its connection ("bye" went out after it).
        #expect(lines(resultA.received) == ["chat hello from A name=A", "error-invalidSignal  -", "chat bye from A name=A", "chat hi from the screen "])
        #expect(lines(resultB.received) == ["chat hello from A name=A", "chat bye from A name=A", "chat hi from the screen "])
        #expect(lines(resultP.received) == ["chat hello from A name=A", "chat bye from A name=A", "chat hi from the screen ", "chat psst name=B"])
        #expect(resultP.received.first { $0.data == "psst" }?.to == resultP.me)
        #expect(relay.server.metrics.value(.signals) == 5)
    }

    @Test func theSignalAPINeedsTheSecretAndChecksItsInput() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber)
        let received = Task {
            try await RelayClient.connect(url: relay.webSocketURL, token: token, logger: quietLogger) { _, events in
                try await events.nextControl { if case .signal = $0 { true } else { false } }
            }
        }
        try await relay.waitForConnections(1)
        let path = "/session/\(session.sessionId)/signal"
        #expect(try await relay.post(path, json: ["type": "notice", "data": "x"], secret: nil).0 == 401)
        #expect(try await relay.post(path, json: ["type": "bad type", "data": "x"]).0 == 400)
        #expect(try await relay.post(path, json: ["type": "notice", "data": "x", "to": "nobody"]).0 == 404)
        #expect(try await relay.post("/session/none/signal", json: ["type": "notice", "data": "x"]).0 == 404)
        #expect(try await relay.post(path, json: ["type": "notice", "data": "the relay restarts at 5"]).0 == 204)
        #expect(try await received.value == .signal(Signal(type: "notice", data: "the relay restarts at 5")))
    }
}
