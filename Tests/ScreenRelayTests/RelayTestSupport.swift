import Foundation
import Logging
import ScreenCodec
import ScreenTesting
import ScreenMedia
import ScreenRelay
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire

/// A real relay on a free loopback port, for one test.
final class RunningRelay: Sendable {
    static let secret = "test-relay-secret-that-is-32-bytes-or-more"
    let server: RelayServer
    let port: Int
    private let task: Task<Void, any Error>

    init(dataDirectory: String? = nil, archiveGraceSeconds: Double = 10, configure: (inout RelayConfiguration) -> Void = { _ in }) async throws {
        var logger = Logger(label: "relay-test")
        // Tests end by cancelling the relay, which Hummingbird reports as an error; only crashes matter here.
        logger.logLevel = .critical
        var configuration = RelayConfiguration(
            host: "127.0.0.1", port: 0, secret: Self.secret, dataDirectory: dataDirectory, archiveGraceSeconds: archiveGraceSeconds)
        configure(&configuration)
        let server = try await RelayServer(configuration: configuration, logger: logger)
        self.server = server
        task = Task { try await server.run() }
        port = try await server.waitUntilListening()
    }

    deinit { task.cancel() }

    var base: String { "\(scheme)://127.0.0.1:\(port)" }
    var scheme: String { server.configuration.tls == nil ? "http" : "https" }

    /// Waits until `count` clients have joined sessions (said hello and were welcomed), however busy the machine.
    func waitForConnections(_ count: Int, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while server.metrics.value(.connections) < count {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(count) connection(s) never joined") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
    var webSocketURL: String { "\(scheme == "https" ? "wss" : "ws")://127.0.0.1:\(port)/ws" }

    struct SessionCreated: Decodable { var sessionId: String; var token: String; var relayURL: String; var viewerURL: String }
    struct TokenMinted: Decodable { var token: String }

    /// POST with the relay secret (or `secret`), returning status and body.
    func post(_ path: String, json: [String: Any]? = nil, secret: String? = RunningRelay.secret) async throws -> (Int, Data) {
        try await request("POST", path, json: json, secret: secret)
    }

    func get(_ path: String) async throws -> (Int, String) {
        let (status, data) = try await request("GET", path, secret: nil)
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// Any method, authorised with the relay secret, a token, or nothing.
    func request(_ method: String, _ path: String, json: [String: Any]? = nil, secret: String? = RunningRelay.secret) async throws -> (Int, Data) {
        // (The relay's own client, not URLSession: its connection cache outlives relays whose ports are reused, and
        // a request through it once never ended.)
        let response = try await RelayHTTPClient().send(
            method, base + path, bearer: secret, json: try json.map { try JSONSerialization.data(withJSONObject: $0) })
        return (response.status, response.body)
    }

    func createSession() async throws -> SessionCreated {
        let (status, data) = try await post("/session")
        guard status == 200 else { throw TestFailure("POST /session answered \(status): \(String(decoding: data, as: UTF8.self))") }
        return try JSONDecoder().decode(SessionCreated.self, from: data)
    }

    func token(session: String, role: Role, expiresIn: Double = 3600, data: String = "") async throws -> String {
        let (status, body) = try await post("/session/\(session)/token", json: ["role": role.rawValue, "expiresIn": expiresIn, "data": data])
        guard status == 200 else { throw TestFailure("token answered \(status): \(String(decoding: body, as: UTF8.self))") }
        return try JSONDecoder().decode(TokenMinted.self, from: body).token
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let quietLogger: Logger = {
    var logger = Logger(label: "relay-client-test")
    logger.logLevel = .warning
    return logger
}()

/// The two ways to reach a relay, for tests that must hold over both.
enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case webSocket
    case inProcess

    var description: String { rawValue }

    func to(_ relay: RunningRelay) -> any RelayTransport {
        switch self {
        case .webSocket: WebSocketTransport(url: relay.webSocketURL)
        case .inProcess: relay.server.inProcessTransport
        }
    }
}

/// Real VP9 frames of the quadrant pattern, and headers for them.
enum TestMedia {
    static let properties = StreamProperties(
        codec: .vp9, width: 320, height: 240, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1)

    /// Encodes `count` frames of the quadrant pattern with metadata "frame N", captured at N/5 s.
    static func encodedFrames(count: Int, codec: VideoCodec = .vp9) throws -> [CollectedFrame] {
        let frame = VideoFrame(width: 320, height: 240)
        TestPattern.fillQuadrants(frame)
        let encoder = makeVideoEncoder(.init(codec: codec, bitrateKbps: 2000))
        let sink = CollectingSink()
        for index in 0..<count {
            frame.captureTime = MediaTime(value: Int64(index), timescale: 5)
            frame.metadata = try FrameMetadata(text: "frame \(index)")
            frame.markAllChanged()
            try encoder.encode(frame) { try sink.write($0) }
        }
        return sink.frames
    }

    /// The header of an opaque test frame (the relay reads only headers): VP9 320×240, a keyframe first, frame
    /// `sequence` captured at `sequence`/10 s.
    static func opaqueHeader(streamId: UInt32, sequence: UInt64, payloadLength: Int) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: streamId, sequence: sequence, flags: sequence == 0 ? [.keyframe] : [], codec: .vp9, width: 320, height: 240,
            captureTime: MediaTime(value: Int64(sequence), timescale: 10), wallClockMilliseconds: 0, metadata: .empty,
            payloadLength: payloadLength)
    }

    static func header(_ frame: CollectedFrame, streamId: UInt32, sequence: UInt64) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: streamId, sequence: sequence, flags: frame.isKeyframe ? [.keyframe] : [], codec: frame.codec,
            width: frame.width, height: frame.height, captureTime: frame.captureTime, wallClockMilliseconds: 0,
            metadata: frame.metadata, payloadLength: frame.payload.count)
    }
}

extension RunningRelay {
    /// An honest viewer of `streamId` with `token`: when each media frame reached it, and the task to cancel when done.
    func honestViewer(token: String, streamId: UInt32) -> (arrivals: Locked<[ContinuousClock.Instant]>, task: Task<Void, any Error>) {
        let arrivals = Locked<[ContinuousClock.Instant]>([])
        let task = Task {
            try await RelayClient.connect(url: webSocketURL, token: token, logger: quietLogger) { link, events in
                try await link.send(.subscribe(streamId: streamId))
                while let event = try await events.next() {
                    if case .media = event { arrivals.withLock { $0.append(.now) } }
                }
            }
        }
        return (arrivals, task)
    }

    /// A publisher of a test stream that keeps reading what it is sent, as publishers do (pings are answered as they
    /// are read): its link and stream once published, and the task to cancel when done.
    func readingPublisher(token: String) async throws -> (link: RelayLink, stream: StreamInfo, task: Task<Void, any Error>) {
        let published = Locked<(link: RelayLink, stream: StreamInfo)?>(nil)
        let task = Task {
            try await RelayClient.connect(url: webSocketURL, token: token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events)
                published.withLock { $0 = (link, stream) }
                while try await events.next() != nil {}
            }
        }
        guard try await eventually(30, { published.value != nil }), let (link, stream) = published.value else {
            task.cancel()
            throw TestFailure("the stream was not published")
        }
        return (link, stream, task)
    }
}

extension RelayLink {
    /// Publishes a stream with the test properties, in `codec` (the frames' own: the relay sends on no frame of
    /// another), and returns it once the relay has answered `published`.
    func publishTestStream(_ events: RelayEvents, codec: VideoCodec = .vp9) async throws -> StreamInfo {
        var properties = TestMedia.properties
        properties.codec = codec
        try await send(.publish(name: "screen", properties: properties))
        guard case .published(let stream)? = try await events.nextControl(where: { if case .published = $0 { true } else { false } }) else {
            throw TestFailure("not published")
        }
        return stream
    }

    /// Sends opaque frames of `bytes` on `streamId` ten times a second until the task is cancelled.
    func sendingOpaqueFrames(streamId: UInt32, bytes: Int) -> Task<Void, any Error> {
        Task {
            let payload = [UInt8](repeating: 0x5A, count: bytes)
            var sequence: UInt64 = 0
            while !Task.isCancelled {
                try await send(TestMedia.opaqueHeader(streamId: streamId, sequence: sequence, payloadLength: payload.count), payload: payload)
                sequence += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Sends `frames` on `streamId`, numbered from 0.
    func send(_ frames: [CollectedFrame], streamId: UInt32) async throws {
        for (index, frame) in frames.enumerated() {
            try await send(TestMedia.header(frame, streamId: streamId, sequence: UInt64(index)), payload: frame.payload)
        }
    }
}

extension RawSocket {
    /// Says hello with `token` as `client` and subscribes to `streamId`, as text frames on an upgraded socket (a
    /// viewer whose reading the test controls).
    func helloAndSubscribe(token: String, client: String, streamId: UInt32) async {
        for message: ControlMessage in [.hello(token: token, client: client), .subscribe(streamId: streamId)] {
            _ = await send(RawSocket.webSocketFrame(opcode: 1, payload: Array(message.encoded().utf8)))
        }
    }
}
