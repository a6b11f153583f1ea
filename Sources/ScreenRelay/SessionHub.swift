import Foundation
import Hummingbird
import Logging
import ScreenWire

/// What a connection's writer task sends, in order.
enum Outgoing: Sendable {
    case frame(ByteBuffer, streamId: UInt32)
    case control(String)
    case close(WireErrorCode, String)
}

/// One session: its ``StreamRouter`` and the outgoing queues of its connections, behind an actor so that
/// every event is applied in order. Frames are forwarded as the same `ByteBuffer` (reference-counted, never
/// copied); each connection's writer drains its own queue, so a slow socket only fills its own queue, whose
/// media part the router bounds.
actor SessionHub {
    let sessionId: String
    let createdAt = Date()
    private var router: StreamRouter<ByteBuffer>
    private var outlets: [String: AsyncStream<Outgoing>.Continuation] = [:]
    private let metrics: RelayMetrics
    private var reportedDrops = 0
    private var reportedRequests = 0
    private var reportedStreams = 0

    init(sessionId: String, metrics: RelayMetrics, limits: StreamRouter<ByteBuffer>.Limits = .init(), publishersMaySignal: Bool = true) {
        self.sessionId = sessionId
        self.router = StreamRouter(sessionId: sessionId, limits: limits, publishersMaySignal: publishersMaySignal)
        self.metrics = metrics
    }

    var isEmpty: Bool { router.isEmpty }

    func join(_ connection: ConnectionInfo, outlet: AsyncStream<Outgoing>.Continuation) {
        outlets[connection.connectionId] = outlet
        metrics.add(.connections)
        perform(router.connect(connection))
    }

    func leave(_ connectionId: String) {
        guard outlets.removeValue(forKey: connectionId) != nil else { return }
        metrics.add(.connections, -1)
        perform(router.disconnect(connectionId))
    }

    func control(_ message: ControlMessage, from connectionId: String) {
        if case .signal = message { metrics.add(.signals) }
        perform(router.handle(message, from: connectionId, now: Self.now()))
    }

    func media(_ buffer: ByteBuffer, header: MediaFrameHeader, from connectionId: String) {
        metrics.add(.framesIn)
        metrics.add(.bytesIn, buffer.readableBytes)
        perform(router.frame(buffer, header: header, size: buffer.readableBytes, from: connectionId, now: Self.now()))
    }

    func delivered(to connectionId: String, streamId: UInt32, bytes: Int) {
        metrics.add(.framesOut)
        metrics.add(.bytesOut, bytes)
        router.frameDelivered(to: connectionId, streamId: streamId)
    }

    /// A signal from the server's HTTP API.
    func serverSignal(_ signal: Signal) throws(WireError) {
        perform(try router.serverSignal(signal))
        metrics.add(.signals)
    }

    func tick() {
        perform(router.tick(now: Self.now()))
    }

    private func perform(_ actions: [StreamRouter<ByteBuffer>.Action]) {
        for action in actions {
            switch action {
            case .sendFrame(let buffer, let connectionId, let streamId):
                outlets[connectionId]?.yield(.frame(buffer, streamId: streamId))
            case .sendControl(let message, let connectionId):
                outlets[connectionId]?.yield(.control(message.encoded()))
            case .close(let connectionId, let code, let reason):
                metrics.add(.protocolErrors)
                outlets[connectionId]?.yield(.control(ControlMessage.error(code: code, message: reason).encoded()))
                outlets[connectionId]?.yield(.close(code, reason))
            }
        }
        // Counters the router keeps, folded into the relay's metrics as they change.
        metrics.add(.framesDropped, router.droppedFrames - reportedDrops)
        reportedDrops = router.droppedFrames
        metrics.add(.keyframeRequests, router.keyframeRequestsSent - reportedRequests)
        reportedRequests = router.keyframeRequestsSent
        let streams = router.streamInfos.count
        metrics.add(.streams, streams - reportedStreams)
        reportedStreams = streams
    }

    private static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// All sessions of a relay.
actor SessionRegistry {
    private var hubs: [String: SessionHub] = [:]
    private let metrics: RelayMetrics
    private let publishersMaySignal: Bool

    init(metrics: RelayMetrics, publishersMaySignal: Bool = true) {
        self.metrics = metrics
        self.publishersMaySignal = publishersMaySignal
    }

    func create() -> SessionHub {
        let id = Self.newIdentifier()
        let hub = SessionHub(sessionId: id, metrics: metrics, publishersMaySignal: publishersMaySignal)
        hubs[id] = hub
        metrics.set(.sessions, hubs.count)
        return hub
    }

    func hub(_ id: String) -> SessionHub? { hubs[id] }

    var all: [SessionHub] { Array(hubs.values) }

    /// Random, URL-safe, unguessable identifiers (128 bits).
    static func newIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max, using: &generator)) }.joined()
    }
}
