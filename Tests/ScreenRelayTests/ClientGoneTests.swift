import Foundation
import ScreenMedia
@testable import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenWire
import Testing

/// A viewer that goes while the relay holds frames for it (a reset, its end of the socket shut, a close frame) takes
/// nothing with it: what was queued for it stops counting against the relay's budget at once, its connection and
/// descriptor go within seconds, and after its close it is sent nothing more. Clients that break the protocol's
/// rules (an unmasked frame, pings instead of a hello) are closed within the documented times.
@Suite(.watchdog()) struct ClientGoneTests {
    enum Departure: String, CaseIterable, CustomTestStringConvertible {
        case reset, shutdown, closeFrame
        var testDescription: String { rawValue }
    }

    /// A relay whose router keeps a viewer's frames queued (no skip to a keyframe, no close for taking nothing),
    /// a viewer's token for its session, and a publisher of a test stream there (its task to cancel when done).
    static func relayThatKeepsQueuing() async throws -> (
        relay: RunningRelay, viewerToken: String, publisher: RelayLink, stream: StreamInfo, publishing: Task<Void, any Error>
    ) {
        let relay = try await RunningRelay {
            $0.subscriberStallSeconds = 600
            $0.subscriberQueueMilliseconds = 600_000
        }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let (publisher, stream, publishing) = try await relay.readingPublisher(token: session.token)
        return (relay, viewerToken, publisher, stream, publishing)
    }

    /// A publisher sending 64 KiB frames ten times a second and a viewer that reads none of them, until the relay
    /// holds at least 768 KiB for it; then the viewer goes its way.
    @Test(arguments: Departure.allCases)
    func whatWasQueuedForAViewerThatWentIsGivenBack(departure: Departure) async throws {
        let (relay, viewerToken, publisher, stream, publishing) = try await Self.relayThatKeepsQueuing()
        defer { publishing.cancel() }
        let viewer = try RawSocket(port: relay.port, timeout: 10, receiveBuffer: 4096)
        #expect(await viewer.upgradeToWebSocket().contains("101"))
        await viewer.helloAndSubscribe(token: viewerToken, client: "gone", streamId: stream.streamId)
        try await relay.waitForConnections(2)
        let sending = publisher.sendingOpaqueFrames(streamId: stream.streamId, bytes: 64 << 10)
        defer { sending.cancel() }
        #expect(
            try await eventually(60) { relay.server.metrics.value(RelayMetrics.Name.queuedBytes) >= 768 << 10 },
            "the relay never held much for the viewer: \(relay.server.metrics.value(RelayMetrics.Name.queuedBytes)) bytes")

        switch departure {
        case .reset:
            viewer.reset()
        case .shutdown:
            viewer.shutdownSending()
        case .closeFrame:
            await viewer.send(RawSocket.webSocketFrame(opcode: 8, payload: [0x03, 0xE8]))
            // It reads from now on: what came before its close, then the relay's close, and nothing after it.
            var mediaBytesAfterClose = 0
            var answered = false
            while let frame = await viewer.receiveWebSocketFrame() {
                if frame.opcode == 8 { answered = true; break }
                if frame.opcode == 2 { mediaBytesAfterClose += frame.payload.count }
            }
            #expect(answered, "the relay did not answer the viewer's close")
            // In the kernel's buffers and the channel's when the close came: a few frames at most, not the 768 KiB
            // and more the relay held.
            #expect(mediaBytesAfterClose < 512 << 10, "the relay went on sending after the close: \(mediaBytesAfterClose) bytes")
        }
        // At once, and its connection closed (after a close, once the relay's answer went; after a reset or a shut
        // side, at once too). The waits are long for a machine that runs every test at once, where this test has
        // taken 143 s in all (the relay, its clients and the test share two threads there).
        #expect(
            try await eventually(30) { relay.server.metrics.value(RelayMetrics.Name.queuedBytes) < 16 << 10 },
            "\(relay.server.metrics.value(RelayMetrics.Name.queuedBytes)) bytes still count for a viewer that went (\(departure))")
        #expect(
            try await eventually(30) { relay.server.metrics.value(.connections) == 1 },
            "the viewer's connection is still open (\(departure))")
    }

    /// Viewers holding a token that subscribe, read nothing and go (reset, shut, close), and clients with no token
    /// that connect and reset, 30 of each: an honest viewer of the same stream keeps getting its frames, and what
    /// the others had queued is given back.
    @Test func anHonestViewerKeepsItsFramesWhileOthersComeAndGo() async throws {
        let (relay, viewerToken, publisher, stream, publishing) = try await Self.relayThatKeepsQueuing()
        defer { publishing.cancel() }
        let (arrivals, honest) = relay.honestViewer(token: viewerToken, streamId: stream.streamId)
        defer { honest.cancel() }
        let sending = publisher.sendingOpaqueFrames(streamId: stream.streamId, bytes: 16 << 10)
        defer { sending.cancel() }
        #expect(try await eventually(20) { arrivals.value.count >= 5 }, "the honest viewer got nothing")
        let started = ContinuousClock.now
        for round in 0..<30 {
            let viewer = try RawSocket(port: relay.port, timeout: 5, receiveBuffer: 4096)
            _ = await viewer.upgradeToWebSocket()
            await viewer.helloAndSubscribe(token: viewerToken, client: "gone", streamId: stream.streamId)
            let tokenless = try RawSocket(port: relay.port, timeout: 5)
            _ = await tokenless.upgradeToWebSocket()
            try await Task.sleep(for: .milliseconds(150))
            switch round % 3 {
            case 0: viewer.reset()
            case 1: viewer.shutdownSending()
            default: await viewer.send(RawSocket.webSocketFrame(opcode: 8, payload: [0x03, 0xE8]))
            }
            tokenless.reset()
        }
        let ended = ContinuousClock.now
        // The honest viewer's frames all along: about ten a second, at least half of them, and no gap as long as a
        // departure's waits (5 s for a client that went, 10 s for a refusal's close): were one of them to hold the
        // relay's loop, the gap would be that long. (Measured: with every test beside it on two cores, 1.6 s once;
        // four runs of it at once beside four busy loops, 3.2 s once.)
        let during = arrivals.value.filter { $0 >= started && $0 <= ended }
        let gaps = zip(during.dropFirst(), during).map { $0 - $1 }
        #expect(Double(during.count) >= (ended - started) / .milliseconds(100) / 2, "\(during.count) frames in \(ended - started)")
        #expect((gaps.max() ?? .zero) < .seconds(4.5), "the honest viewer waited \(gaps.max() ?? .zero) for a frame")
        // All that the others had queued is given back; what is left is what is on its way to the honest viewer.
        #expect(
            try await eventually(30) { relay.server.metrics.value(RelayMetrics.Name.queuedBytes) < 64 << 10 },
            "\(relay.server.metrics.value(RelayMetrics.Name.queuedBytes)) bytes still count for viewers that went")
        #expect(try await eventually(30) { relay.server.metrics.value(.connections) == 2 }, "connections of clients that went are still open")
    }

    /// RFC 6455 §5.1: a client's frames are masked, and a server closes a connection whose frames are not (1002,
    /// with why), whether its client holds a token or not.
    @Test(arguments: [true, false])
    func anUnmaskedFrameClosesTheConnection(withToken: Bool) async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let token = withToken ? try await relay.token(session: session.sessionId, role: .subscriber) : "not-a-token"
        let client = try RawSocket(port: relay.port, timeout: 10)
        #expect(await client.upgradeToWebSocket().contains("101"))
        let hello = Array(ControlMessage.hello(token: token, client: "unmasked").encoded().utf8)
        await client.send(RawSocket.webSocketFrame(opcode: 1, payload: hello, masked: false))
        var close: RawSocket.WebSocketFrame?
        while let frame = await client.receiveWebSocketFrame() {
            if frame.opcode == 8 { close = frame; break }
        }
        let payload = close?.payload ?? []
        #expect(payload.count >= 2 && UInt16(payload[0]) << 8 | UInt16(payload[1]) == 1002)
        #expect(String(decoding: payload.dropFirst(2), as: UTF8.self).contains("masked"))
        #expect(await client.isClosedByPeer(within: 5))
    }

    /// A client without a token that sends pings instead of a hello and reads nothing (not the pongs, not the
    /// refusal) is cut off at the hello deadline and the close's grace (10 s each), not left to a write stall.
    @Test func pingsInsteadOfAHelloAreCutOffAfterTheHelloDeadlineAndTheGrace() async throws {
        let relay = try await RunningRelay()
        let client = try RawSocket(port: relay.port, timeout: 5, receiveBuffer: 4096)
        #expect(await client.upgradeToWebSocket().contains("101"))
        let started = ContinuousClock.now
        let ping = RawSocket.webSocketFrame(opcode: 9, payload: [UInt8](repeating: 0x50, count: 120))
        var open = true
        while open, ContinuousClock.now - started < .seconds(45) {
            open = await client.send(ping)
            if open { try await Task.sleep(for: .milliseconds(5)) }
        }
        let elapsed = ContinuousClock.now - started
        #expect(!open, "the client was still connected after \(elapsed)")
        #expect(elapsed < .seconds(30), "the client was cut off only after \(elapsed)")
        #expect(try await eventually(30) { relay.server.metrics.value(.connections) == 0 })
    }
}
