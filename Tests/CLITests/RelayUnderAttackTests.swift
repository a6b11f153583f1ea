import Foundation
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// The attacks that used to take a relay down, against the real `screenrelay` process: its memory is read
/// from /proc while hundreds of hostile connections come at once, and honest clients are served throughout.
@Suite(.watchdog()) struct RelayUnderAttackTests {
    /// A session made over HTTP, and two honest clients in it exchanging a chat line: true when it arrives.
    private func honestChat(_ relay: RunningRelayProcess) async throws -> Bool {
        let (session, viewerToken) = try await relay.makeSession()
        let listener = Task {
            try await RelayClient.connect(url: session.relayURL, token: viewerToken, logger: .init(label: "honest")) { _, events in
                while let event = try await events.next() {
                    if case .control(.signal(let signal)) = event, signal.data == "hello from an honest client" { return true }
                }
                return false
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        try await RelayClient.connect(url: session.relayURL, token: session.token, logger: .init(label: "honest")) { link, events in
            _ = try await events.nextControl()
            try await link.send(.signal(Signal(type: "chat", data: "hello from an honest client")))
        }
        return try await listener.value
    }

    @Test
    func hostileConnectionsByTheHundredLeaveMemoryBoundedAndHonestClientsServed() async throws {
        let relay = try await RunningRelayProcess(["--request-timeout", "3", "--max-connections", "2000"])
        #expect(try await honestChat(relay))
        let before = relay.residentKilobytes
        var attackers: [RawSocket] = []
        // 60 WebSockets that claim an 8 MiB message before hello (this once cost 8 MiB each), and 60 that
        // send 60 KiB of a message and stall: refused at the frame's header, and bounded at 64 KiB each.
        for index in 0..<120 {
            let socket = try RawSocket(port: relay.port)
            _ = await socket.upgradeToWebSocket()
            let frame =
                index < 60
                ? RawSocket.webSocketFrame(opcode: 2, payload: [UInt8](repeating: 7, count: 65_536), declaredLength: 8 << 20)
                : RawSocket.webSocketFrame(opcode: 2, fin: false, payload: [UInt8](repeating: 7, count: 60_000))
            await socket.send(frame)
            attackers.append(socket)
        }
        // 100 requests whose headers never end, and 100 connections that say nothing.
        for index in 0..<200 {
            let socket = try RawSocket(port: relay.port)
            if index < 100 { await socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ") }
            attackers.append(socket)
        }
        let during = relay.residentKilobytes
        #expect(try await honestChat(relay), "an honest pair could not chat during the attack")
        #expect(try await RelayHTTPClient().send("GET", "http://127.0.0.1:\(relay.port)/healthz").status == 200)
        // The header deadline (3 s) and the hello deadline (10 s, with a 10 s grace for the close) cut off every attacker.
        #expect(try await eventually(40) { relay.openDescriptors < 60 }, "attackers' connections still open: \(relay.openDescriptors)")
        let peak = max(during, relay.residentKilobytes)
        // Stated bound: 320 hostile connections add less than 64 MB (once 840 MB for 100 of the first kind).
        #expect(peak - before < 64 * 1024, "the relay grew from \(before) kB to \(peak) kB")
        let metrics = try await RelayHTTPClient().send("GET", "http://127.0.0.1:\(relay.port)/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"screenrelay_refused_total{limit="request_head_timeout"} 200"#), "\(text)")
        // (The messages claimed too large are refused by the WebSocket layer on the frame's header.)
        attackers.removeAll()
    }
}
