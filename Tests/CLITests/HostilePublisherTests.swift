import Foundation
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// What once trapped the whole relay, tried with nothing but the tokens it hands out, against the real
/// `screenrelay` process while the session is recorded and its HLS read: the relay lives, an honest viewer of
/// another session keeps its frames, and SIGTERM ends it within its grace whatever a client does.
@Suite(.watchdog()) struct HostilePublisherTests {
    struct Session {
        let credentials: SessionCredentials
        let viewerToken: String
    }

    private func session(_ relay: RunningRelayProcess) async throws -> Session {
        let (credentials, viewerToken) = try await relay.makeSession()
        return Session(credentials: credentials, viewerToken: viewerToken)
    }

    private func header(_ sequence: UInt64, key: Bool, time: MediaTime, payload: Int) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: 1, sequence: sequence, flags: key ? .keyframe : [], codec: .vp9, width: 64, height: 48, captureTime: time,
            wallClockMilliseconds: 1_795_000_000_000, metadata: .empty, payloadLength: payload)
    }

    @Test func hostilePublishersCannotEndTheRelayAndSigtermEndsItWithinItsGrace() async throws {
        let relay = try await RunningRelayProcess(["--shutdown-grace", "2"])
        let victim = try await session(relay)
        // Payloads the relay forwards, records and packages without decoding them.
        let payloads: [[UInt8]] = [[0x82, 0x49, 0x83, 0x42] + [UInt8](repeating: 7, count: 300), [0x86] + [UInt8](repeating: 9, count: 100)]
        // The attacker's session is recorded and its HLS read, where the traps were.
        let attacked = try await session(relay)
        let http = RelayHTTPClient()
        let archive = try await http.send(
            "POST", "http://127.0.0.1:\(relay.port)/archive", bearer: RunningRelayProcess.secret,
            json: Data(#"{"sessionId":"\#(attacked.credentials.sessionId)"}"#.utf8))
        #expect(archive.status == 200, "\(String(decoding: archive.body, as: UTF8.self))")
        // A frame rate of 0 and of 1e-300: refused where parsed (and the connection closed), naming the field.
        var answers: [String] = []
        for rate in ["0", "1e-300"] {
            let answer = try await RelayClient.connect(url: attacked.credentials.relayURL, token: attacked.credentials.token, logger: .init(label: "attacker")) {
                link, events -> String? in
                _ = try await events.nextControl()
                try await link.sendRawText(
                    #"{"v":1,"type":"publish","name":"x","properties":{"videoType":"screen","codec":"vp9","width":64,"height":48,"estimatedFramesPerSecond":\#(rate),"estimatedCaptureDelayMilliseconds":0}}"#)
                guard case .error(_, let message)? = try? await events.nextControl(where: { if case .error = $0 { true } else { false } }) else { return nil }
                return message
            }
            if let answer { answers.append(answer) }
        }
        #expect(answers.count == 2 && answers.allSatisfy { $0.contains("estimatedFramesPerSecond") }, "\(answers)")
        // A stream whose capture times leap to INT64_MAX / 1 and back to INT64_MIN / 1 after a keyframe.
        try await RelayClient.connect(url: attacked.credentials.relayURL, token: attacked.credentials.token, logger: .init(label: "attacker")) { link, events in
            _ = try await events.nextControl()
            try await link.send(.publish(name: "screen", properties: .init(codec: .vp9, width: 64, height: 48, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 0)))
            _ = try await events.nextControl(where: { if case .published = $0 { true } else { false } })
            try await link.send(header(0, key: true, time: MediaTime(value: 1, timescale: 1), payload: payloads[0].count), payload: payloads[0])
            for (sequence, value) in [(1, Int64.max), (2, Int64.min)] as [(UInt64, Int64)] {
                try? await link.send(header(sequence, key: false, time: MediaTime(value: value, timescale: 1), payload: payloads[1].count), payload: payloads[1])
            }
            _ = try? await events.nextControl(where: { if case .error = $0 { true } else { false } })
        }
        _ = try? await http.send("GET", "http://127.0.0.1:\(relay.port)/hls/\(attacked.credentials.sessionId)/index.m3u8?token=\(attacked.viewerToken)")
        // The relay lives: a new session works, and its health says so.
        #expect(!relay.process.hasExited, "\(relay.process.errorsSoFar)")
        #expect(try await http.send("GET", "http://127.0.0.1:\(relay.port)/healthz").status == 200)

        // A viewer of the victim session that reads nothing: SIGTERM still ends the relay within its grace.
        let deaf = try RawSocket(port: relay.port)
        #expect(await deaf.upgradeToWebSocket().contains("101"))
        await deaf.send(RawSocket.webSocketFrame(opcode: 1, payload: Array(ControlMessage.hello(token: victim.viewerToken, client: "deaf").encoded().utf8)))
        // And a client with no token that floods pings and reads nothing (not the pongs): in no session.
        let pinging = try RawSocket(port: relay.port, timeout: 2, receiveBuffer: 4096)
        #expect(await pinging.upgradeToWebSocket().contains("101"))
        let flood = Task.detached {
            let ping = RawSocket.webSocketFrame(opcode: 9, payload: [UInt8](repeating: 0x50, count: 120))
            while !Task.isCancelled, await pinging.send(ping) {}
        }
        defer { flood.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        let start = Date()
        relay.process.signal(SIGTERM)
        let outcome = await relay.process.wait(timeout: 30)
        let took = Date().timeIntervalSince(start)
        // Within its grace: the clients left at its end are dropped and the relay ends by itself. (Not a bound on
        // wall time: with every test at once a step of milliseconds has taken seconds here. Without the drop, the
        // service group would cancel the relay 10 s past the grace, and the relay says so.)
        #expect(took < 30, "the relay was still running \(took) s after SIGTERM")
        #expect(outcome.standardError.contains("shutdown grace over: dropping the connections still open"), "\(outcome.standardError)")
        #expect(
            !outcome.standardError.contains("cancelled before its connections had closed"),
            "SIGTERM took \(took) s with a viewer that reads nothing and a tokenless client pinging (grace 2 s): \(outcome.standardError)")
        #expect(outcome.status == 0 || outcome.status == 143, "\(outcome.status) \(outcome.standardError)")
        // The recording was finished and announced on the way out.
        #expect(outcome.standardError.contains("archive"), "\(outcome.standardError)")
    }

    /// One publisher token scripted onto many connections: the ninth is refused with the reason, and the other
    /// publisher of the session still publishes and is still watched.
    @Test func aPublisherTokenOnManyConnectionsGetsItsShareOnly() async throws {
        let relay = try await RunningRelayProcess([])
        let target = try await session(relay)
        /// The first message the relay sends after `hello` with `token`, and the socket (kept open).
        func join(_ token: String) async throws -> (RawSocket, ControlMessage?) {
            let socket = try RawSocket(port: relay.port)
            #expect(await socket.upgradeToWebSocket().contains("101"))
            _ = await socket.send(RawSocket.webSocketFrame(opcode: 1, payload: Array(ControlMessage.hello(token: token, client: "scripted").encoded().utf8)))
            guard let frame = await socket.receiveWebSocketFrame(), frame.opcode == 1 else { return (socket, nil) }
            return (socket, try? ControlMessage.parse(String(decoding: frame.payload, as: UTF8.self)))
        }
        var sockets: [RawSocket] = []
        var refusals: [String] = []
        for _ in 0..<10 {
            let (socket, answer) = try await join(target.credentials.token)
            sockets.append(socket)
            if case .error(_, let message)? = answer { refusals.append(message) }
        }
        #expect(refusals.count == 2 && refusals.allSatisfy { $0.contains("8 connections") }, "\(refusals)")
        // The session's owner mints another publisher token: it joins and is welcomed.
        let http = RelayHTTPClient()
        let minted = try await http.send(
            "POST", "http://127.0.0.1:\(relay.port)/session/\(target.credentials.sessionId)/token", bearer: RunningRelayProcess.secret,
            json: Data(#"{"role":"publisher"}"#.utf8))
        let other = try JSONSerialization.jsonObject(with: minted.body) as? [String: Any]
        let (socket, answer) = try await join(other?["token"] as? String ?? "")
        sockets.append(socket)
        guard case .welcome? = answer else {
            Issue.record("another token of the session was not welcomed: \(String(describing: answer))")
            return
        }
        #expect(!relay.process.hasExited, "\(relay.process.errorsSoFar)")
    }
}
