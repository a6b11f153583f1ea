import Foundation
import ScreenMedia
import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenWire
import Testing

/// Attacks on a real relay on loopback: the attacker is closed with the documented reason or throttled, what
/// the relay holds for it stays bounded, and an honest subscriber keeps receiving.
///
/// Serialized, and light on bytes: in a debug build every WebSocket byte a client sends is masked (and unmasked
/// by the relay) one at a time on the shared event loops, so megabytes of attack traffic from several tests at
/// once would starve the honest clients these tests watch.
@Suite(.watchdog(), .serialized) struct HostileClientTests {
    /// A publisher with a stream and an honest subscriber counting what it receives, around `attack`.
    func withHonestSession<Result: Sendable>(
        on relay: RunningRelay, _ attack: @escaping @Sendable (_ session: String) async throws -> Result
    ) async throws -> (result: Result, honestChats: Int, honestStillReceives: Bool) {
        let session = try await relay.createSession()
        let honestToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 10)
        let honest = Locked((frames: 0, chats: 0))
        return try await RelayClient.connect(url: relay.webSocketURL, token: session.token, logger: quietLogger) { publisher, events in
            _ = try await events.nextControl()
            let stream = try await publisher.publishTestStream(events)
            let subscriber = Task {
                try await RelayClient.connect(url: relay.webSocketURL, token: honestToken, logger: quietLogger) { link, events in
                    try await link.send(.subscribe(streamId: stream.streamId))
                    while let event = try await events.next() {
                        switch event {
                        case .media: honest.withLock { $0.frames += 1 }
                        case .control(.signal): honest.withLock { $0.chats += 1 }
                        case .control(.streamDestroyed): return
                        default: continue
                        }
                    }
                }
            }
            try await relay.waitForConnections(2)
            let result = try await attack(session.sessionId)
            let before = honest.value.frames
            try await publisher.send(frames, streamId: stream.streamId)
            let stillReceives = try await eventually(20) { honest.value.frames >= before + 10 }
            try await publisher.send(.unpublish(streamId: stream.streamId))
            try await subscriber.value
            return (result, honest.value.chats, stillReceives)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aClientThatDoesNotReadWhatItIsSentIsClosed(transport: TransportKind) async throws {
        // Signals unthrottled, so that only the queue bound stands between this client and the relay's memory
        // (a smaller one than the default: the same rule, reached with fewer bytes).
        let relay = try await RunningRelay {
            $0.signalsPerSecond = 1e9
            $0.signalBurst = 1e9
            $0.sessionSignalsPerSecond = 1e9
            $0.maximumQueuedControlBytes = 512 << 10
        }
        let outcome = try await withHonestSession(on: relay) { session in
            let token = try await relay.token(session: session, role: .subscriber)
            // It reads nothing after hello and sends itself 8 KB lines: they pile up for it, at the relay.
            return try await RelayClient.connect(transport: transport.to(relay), token: token, logger: quietLogger) { link, events in
                guard case .welcome(let me, _, _, _, _, _)? = try await events.nextControl() else { return false }
                let line = String(repeating: "x", count: Signal.maximumDataSize)
                var sent = 0
                do {
                    // Until the relay has closed it (a client that does not read may not notice at once).
                    while sent < 4_000, relay.server.metrics.value(.overflowCloses) == 0 {  // 32 MB: many times the bound and socket buffers
                        try await link.send(.signal(Signal(type: "chat", data: line, to: me)))
                        sent += 1
                    }
                } catch {}
                // Closed by the relay: it has left its session, where the publisher and the honest one remain.
                return try await eventually(20) {
                    relay.server.metrics.value(.overflowCloses) == 1 && relay.server.metrics.value(.connections) == 2
                }
            }
        }
        #expect(outcome.result, "the relay did not close the client that does not read")
        #expect(outcome.honestChats == 0)
        #expect(outcome.honestStillReceives)
    }

    /// A subscriber that stops reading media (its socket fills, it takes nothing more) is closed once it has
    /// taken nothing for the stall limit, without a keyframe asked for it; a healthy one keeps getting every frame.
    @Test func aSubscriberThatStopsReadingIsEvictedWithoutCostingTheOthers() async throws {
        // The healthy subscriber may have a busy machine's seconds queued without being thinned or evicted; the
        // stopped one takes nothing at all, which no queue bound waits for.
        let relay = try await RunningRelay {
            $0.subscriberStallSeconds = 3
            $0.subscriberQueueMilliseconds = 20_000
        }
        let session = try await relay.createSession()
        let subscriberToken = try await relay.token(session: session.sessionId, role: .subscriber)
        // Opaque frames (the relay reads only their header), 640 KB a second: a stopped reader's buffers fill in
        // seconds.
        let payload = [UInt8](repeating: 0x5A, count: 64 << 10)
        @Sendable func header(_ sequence: UInt64, streamId: UInt32) -> MediaFrameHeader {
            TestMedia.opaqueHeader(streamId: streamId, sequence: sequence, payloadLength: payload.count)
        }
        let healthy = Locked(0)
        let (publisher, stream, publishing) = try await relay.readingPublisher(token: session.token)
        defer { publishing.cancel() }
        let outcome = try await {
            let reader = Task {
                try await RelayClient.connect(url: relay.webSocketURL, token: subscriberToken, logger: quietLogger) { link, events in
                    try await link.send(.subscribe(streamId: stream.streamId))
                    while let event = try await events.next() {
                        if case .media = event { healthy.withLock { $0 += 1 } }
                    }
                }
            }
            defer { reader.cancel() }
            let stopped = Task {
                try await RelayClient.connect(url: relay.webSocketURL, token: subscriberToken, logger: quietLogger) { link, events in
                    try await link.send(.subscribe(streamId: stream.streamId))
                    // Reads nothing more, ever: what the relay sends it piles up in its socket until it takes no more.
                    try await Task.sleep(for: .seconds(600))
                }
            }
            defer { stopped.cancel() }
            try await relay.waitForConnections(3)
            var sequence: UInt64 = 0
            var evicted = false
            // Ten frames a second until it is evicted (two minutes at most).
            while !evicted, sequence < 1_200 {
                try await publisher.send(header(sequence, streamId: stream.streamId), payload: payload)
                sequence += 1
                try await Task.sleep(for: .milliseconds(100))
                evicted = relay.server.metrics.value(.subscribersEvicted) == 1
            }
            // The healthy one gets what follows.
            let sent = Int(sequence)
            for _ in 0..<10 {
                try await publisher.send(header(sequence, streamId: stream.streamId), payload: payload)
                sequence += 1
            }
            let caughtUp = try await eventually(30) { healthy.value >= sent + 10 }
            let behind = relay.server.metrics.value(.keyframeRequestsByCause, KeyframeCause.subscriberBehind.rawValue)
            return (evicted, caughtUp, behind, relay.server.metrics.value(.connections))
        }()
        #expect(outcome.0, "the subscriber that stopped reading was not evicted")
        #expect(outcome.1, "the healthy subscriber missed frames: \(healthy.value)")
        #expect(outcome.2 == 0, "no keyframe was asked for on its account")
        #expect(outcome.3 == 2, "the publisher and the healthy subscriber remain")
    }

    @Test
    func aChatFloodIsThrottledForEveryoneElse() async throws {
        let relay = try await RunningRelay()
        let clock = ContinuousClock()
        let started = clock.now
        let outcome = try await withHonestSession(on: relay) { session in
            let token = try await relay.token(session: session, role: .subscriber)
            return try await RelayClient.connect(url: relay.webSocketURL, token: token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                for _ in 0..<2_000 { try await link.send(.signal(Signal(type: "chat", data: "spam"))) }
                // The refusals say why.
                let refusal = try await events.nextControl { if case .error(.invalidSignal, _) = $0 { true } else { false } }
                return refusal
            }
        }
        let seconds = (clock.now - started) / .seconds(1)
        #expect(outcome.result == .error(code: .invalidSignal, message: "too many signals: at most 20 a second"))
        // The burst, then 20 a second: not the 2,000 sent.
        #expect(outcome.honestChats <= 40 + Int(20 * seconds) + 1, "\(outcome.honestChats) chat lines in \(seconds) s")
        #expect(outcome.honestStillReceives)
    }
}
