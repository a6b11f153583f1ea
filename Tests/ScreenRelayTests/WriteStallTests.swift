import Foundation
import ScreenMedia
@testable import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenWire
import Testing

/// A connection that takes nothing of what the relay writes to it for the idle timeout is closed, whatever it is
/// (an HLS reader that never reads its segment, a WebSocket whose router bound is further off): what it had pending
/// is freed, and the others go on.
@Suite(.watchdog()) struct WriteStallTests {
    @Test func aConnectionThatTakesNothingForTheIdleTimeoutIsClosed() async throws {
        // The router would wait ten minutes for this subscriber; the idle timeout, five seconds (pings every 2.5 s: a
        // publisher on a loaded machine answers them in time).
        let relay = try await RunningRelay {
            $0.idleTimeoutSeconds = 5
            $0.subscriberStallSeconds = 600
            $0.subscriberQueueMilliseconds = 600_000
        }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let payload = [UInt8](repeating: 0x5A, count: 64 << 10)
        let (publisher, stream, publishing) = try await relay.readingPublisher(token: session.token)
        defer { publishing.cancel() }
        // The deaf viewer: hello and subscribe over a raw socket, then it never reads again.
        let deaf = try RawSocket(port: relay.port, timeout: 10)
        #expect(await deaf.upgradeToWebSocket().contains("101"))
        await deaf.helloAndSubscribe(token: viewerToken, client: "deaf", streamId: stream.streamId)
        try await relay.waitForConnections(2)
        var sequence: UInt64 = 0
        while relay.server.metrics.value(.writeStall) == 0, sequence < 600 {
            try await publisher.send(TestMedia.opaqueHeader(streamId: stream.streamId, sequence: sequence, payloadLength: payload.count), payload: payload)
            sequence += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(relay.server.metrics.value(.writeStall) == 1, "the viewer that reads nothing was not closed")
        #expect(try await eventually(30) { relay.server.metrics.value(.connections) == 1 }, "it is still in its session")
    }
}
