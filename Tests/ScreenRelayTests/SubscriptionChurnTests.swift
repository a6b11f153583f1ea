import Foundation
import NIOCore
@testable import ScreenRelay
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenWire
import Testing

/// One viewer token cycling `subscribe` (with catch-up) and `unsubscribe` on connections that never read: each
/// subscribe queues the cached group of pictures again, so what a connection holds must go when its subscription
/// does, and no copy of a frame may be made for it. Played on a session hub whose connections' writers never run.
@Suite(.watchdog()) struct SubscriptionChurnTests {
    static let properties = StreamProperties(codec: .vp9, width: 1920, height: 1080, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1)

    static func frame(_ sequence: UInt64, bytes: Int) -> (ByteBuffer, MediaFrameHeader) {
        let header = MediaFrameHeader(
            streamID: 1, sequence: sequence, flags: sequence == 0 ? [.keyframe] : [], codec: .vp9, width: 1920, height: 1080,
            captureTime: MediaTime(value: Int64(sequence), timescale: 5), wallClockMilliseconds: 0, metadata: .empty, payloadLength: bytes)
        var buffer = ByteBuffer(bytes: header.encoded())
        buffer.writeRepeatingByte(0x5A, count: bytes)
        return (buffer, header)
    }

    @Test func cyclingSubscriptionsHoldsAtMostOneGroupAConnectionAndCopiesNothing() async throws {
        let relay = QueuedBytesBudget()
        let limits = ConnectionOutlet.Limits(messages: 1024, controlBytes: 4 << 20)
        let hub = SessionHub(sessionId: "s", metrics: RelayMetrics())
        await hub.join(ConnectionInfo(connectionId: "p", role: .publisher, data: ""), token: "publisher", outlet: ConnectionOutlet(limits: limits, relay: relay))
        await hub.control(.publish(name: "screen", properties: Self.properties), from: "p")
        // A group of pictures in the cache: a 400 KB keyframe and 20 deltas of 20 KB (800 KB).
        var frames: [ByteBuffer] = []
        for sequence in 0..<21 {
            let (buffer, header) = Self.frame(UInt64(sequence), bytes: sequence == 0 ? 400_000 : 20_000)
            frames.append(buffer)
            await hub.media(buffer, header: header, from: "p")
        }
        let group = frames.reduce(0) { $0 + $1.readableBytes + 64 }
        var attackers: [ConnectionOutlet] = []
        for index in 0..<10 {
            let outlet = ConnectionOutlet(limits: limits, relay: relay)
            attackers.append(outlet)
            await hub.join(ConnectionInfo(connectionId: "a\(index)", role: .subscriber, data: ""), token: "viewer", outlet: outlet)
        }
        var peak = 0
        for _ in 0..<200 {
            for index in attackers.indices {
                await hub.control(.subscribe(streamId: 1, catchUp: true), from: "a\(index)")
                peak = max(peak, relay.queuedBytes)
                await hub.control(.unsubscribe(streamId: 1), from: "a\(index)")
            }
        }
        // Each held at most the group and its control messages (replies, refusals of its churn past its allowance) at a
        // time; unsubscribed, only control messages.
        #expect(peak <= 10 * (group + 128 << 10), "peak \(peak) bytes queued")
        for outlet in attackers {
            #expect(!outlet.overflowed || outlet.queuedBytes == 0)
            #expect(outlet.queuedBytes < 128 << 10, "\(outlet.queuedBytes) bytes still queued after unsubscribing")
        }
        // No frame was copied for anyone: the cache's buffers are the ones queued (each shares the publisher's storage).
        let queued = ConnectionOutlet(limits: limits, relay: relay)
        await hub.join(ConnectionInfo(connectionId: "fresh", role: .subscriber, data: ""), token: "another", outlet: queued)
        await hub.control(.subscribe(streamId: 1, catchUp: true), from: "fresh")
        var shared = 0
        queued.finish()
        while let item = await queued.next() {
            if case .frame(let buffer, _, let flags) = item {
                shared += frames.contains { $0.withUnsafeReadableBytes { $0.baseAddress } == buffer.withUnsafeReadableBytes { $0.baseAddress } } ? 1 : 0
                #expect(flags != nil || buffer == frames.last)
            }
            queued.sent(item)
        }
        #expect(shared == frames.count)
    }

    /// Over a real relay: a client with a viewer token that cycles `subscribe` (with catch-up) and `unsubscribe` as
    /// fast as it can write, and sends as many `unsubscribe`s of a stream it does not receive, reading nothing; and a
    /// client with no token that sends `unsubscribe`s before any hello. An `unsubscribe` is free and never refused:
    /// the subscribes pay the allowance, each ended subscription gives its queue back, the tokenless client is
    /// closed, and an honest viewer's frames keep coming.
    @Test func unsubscribeFloodsWithATokenAndWithoutCostTheHonestViewerNothing() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let (publisher, stream, publishing) = try await relay.readingPublisher(token: session.token)
        defer { publishing.cancel() }
        let (arrivals, honest) = relay.honestViewer(token: viewerToken, streamId: stream.streamId)
        defer { honest.cancel() }
        let sending = publisher.sendingOpaqueFrames(streamId: stream.streamId, bytes: 16 << 10)
        defer { sending.cancel() }
        #expect(try await eventually(20) { arrivals.value.count >= 5 }, "the honest viewer got nothing")

        let started = ContinuousClock.now
        let churner = try RawSocket(port: relay.port, timeout: 10, receiveBuffer: 4096)
        #expect(await churner.upgradeToWebSocket().contains("101"))
        await churner.helloAndSubscribe(token: viewerToken, client: "churner", streamId: stream.streamId)
        let cycle: [ControlMessage] = [.subscribe(streamId: stream.streamId, catchUp: true), .unsubscribe(streamId: stream.streamId), .unsubscribe(streamId: 99)]
        for _ in 0..<300 {
            for message in cycle { _ = await churner.send(RawSocket.webSocketFrame(opcode: 1, payload: Array(message.encoded().utf8))) }
        }
        let tokenless = try RawSocket(port: relay.port, timeout: 10)
        #expect(await tokenless.upgradeToWebSocket().contains("101"))
        for _ in 0..<100 {
            _ = await tokenless.send(RawSocket.webSocketFrame(opcode: 1, payload: Array(ControlMessage.unsubscribe(streamId: stream.streamId).encoded().utf8)))
        }
        #expect(await tokenless.isClosedByPeer(within: 10), "a client that never said hello is closed")
        // Past its allowance its subscribes were refused; each subscription it got ended at its unsubscribe, and
        // what had been queued for it went back: what is left is control messages and the honest viewer's frames.
        #expect(try await eventually(30) { relay.server.metrics.value(RelayLimit.subscriptionRate) > 0 }, "the subscribes paid their allowance")
        #expect(
            try await eventually(30) { ["waiting", "0", "1", "2"].reduce(0) { $0 + relay.server.metrics.value(.subscribersByLayer, $1) } == 1 },
            "the churner's last subscription ended at its unsubscribe: the honest viewer's is the only one")
        #expect(
            try await eventually(30) { relay.server.metrics.value(RelayMetrics.Name.queuedBytes) < 256 << 10 },
            "\(relay.server.metrics.value(RelayMetrics.Name.queuedBytes)) bytes still queued")
        try await Task.sleep(for: .seconds(2))
        let ended = ContinuousClock.now
        // The honest viewer's frames all along: at least half the ten a second, and no gap as long as a
        // departure's waits (as in ClientGoneTests, whose bound this shares: a machine running every test).
        let during = arrivals.value.filter { $0 >= started && $0 <= ended }
        let gaps = zip(during.dropFirst(), during).map { $0 - $1 }
        #expect(Double(during.count) >= (ended - started) / .milliseconds(100) / 2, "\(during.count) frames in \(ended - started)")
        #expect((gaps.max() ?? .zero) < .seconds(4.5), "the honest viewer waited \(gaps.max() ?? .zero) for a frame")
        #expect(!(await churner.isClosedByPeer(within: 0.2)), "the churner, refused, is still connected: what it gave back was not freed by a close")
        churner.reset()
    }
}

/// Frames whose flags a subscriber gets otherwise (catch-up, layer bits cleared) go out over a real WebSocket as one
/// message in pieces, the flags written over the shared buffer: the subscriber reads the frame whole, with its flags.
@Suite(.watchdog()) struct RewrittenFlagsOverTheWireTests {
    @Test(arguments: TransportKind.allCases)
    func aJoinerGetsTheCachedGroupWholeWithTheCatchUpFlag(transport: TransportKind) async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 4)
        try await RelayClient.connect(url: relay.webSocketURL, token: session.token, logger: quietLogger) { publisher, events in
            _ = try await events.nextControl()
            let stream = try await publisher.publishTestStream(events)
            try await publisher.send(frames, streamId: stream.streamId)
            try await Task.sleep(for: .milliseconds(300))
            let received = try await RelayClient.connect(transport: transport.to(relay), token: viewerToken, logger: quietLogger) { link, events in
                try await link.send(.subscribe(streamId: stream.streamId, catchUp: true))
                var got: [(MediaFrameHeader, [UInt8])] = []
                while got.count < frames.count, let event = try await events.next() {
                    if case .media(let header, let payload) = event { got.append((header, Array(payload.readableBytesView))) }
                }
                return got
            }
            #expect(received.map(\.1) == frames.map(\.payload))
            #expect(received.dropLast().allSatisfy { $0.0.flags.contains(.catchUp) })
            #expect(received.last.map { !$0.0.flags.contains(.catchUp) } == true)
            #expect(received.first?.0.flags.contains(.keyframe) == true)
            #expect(received.map { String(decoding: $0.0.metadata.bytes, as: UTF8.self) } == (0..<4).map { "frame \($0)" })
        }
    }
}
