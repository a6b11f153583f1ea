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
