import Logging
import ScreenCodec
public import ScreenMedia
import ScreenPipeline
import ScreenRecording
public import ScreenService
import ScreenSession
public import ScreenTransportClient
import ScreenWire
import ServiceLifecycle

/// `screensub --server URL`: subscribes to a live stream and prints, records (`--output`) and decodes each frame
/// as it arrives, until the stream ends, `frameLimit` frames have come, or SIGINT or SIGTERM (Ctrl-C: the
/// recording is finished and the summary printed, as when the stream ends).
public struct LiveSubscription: Sendable {
    public let server: String
    public let token: String
    public let trust: ClientTrust
    public let stream: UInt32?
    public let frameLimit: Int?
    public let decodes: Bool
    /// What it tells the relay it decodes (`--decodes-only`); nil: nothing, the stream as published.
    public let decodesOnly: [String]?
    public let framesDirectory: String?
    public let outputPath: String?
    public let printsMetadata: Bool
    public let json: Bool
    public let verbose: Bool

    public func run(output: JobOutput) async throws(CommandFailure) {
        var logger = Logger(label: "screensub")
        logger.logLevel = verbose ? .debug : .warning
        let subscriber = StreamSubscriber(
            transport: WebSocketTransport(url: RelayEndpoint.webSocketURL(server: server), trust: trust), token: token, streamId: stream,
            client: "screensub/\(ScreenpubVersion.current)", decodes: decodesOnly, logger: logger)
        let summary: SubscriptionSummary
        do {
            summary = try await Self.untilShutdownSignal(logger: logger) { try await subscribe(subscriber, output: output.line) }
        } catch {
            throw CommandFailure(ExitStatus.runtimeFailure, "\(error)")
        }
        output.line(SubscriptionLines.summary(summary, json: json))
        if summary.connectionLost { throw CommandFailure(ExitStatus.runtimeFailure, SubscriptionLines.connectionLost(summary)) }
    }

    private func subscribe(_ subscriber: StreamSubscriber, output: @escaping @Sendable (String) -> Void) async throws -> SubscriptionSummary {
        let (printing, json, outputPath, directory) = (printsMetadata, json, outputPath, framesDirectory)
        let makeRenderer: (@Sendable (StreamInfo) throws -> any VideoRenderer)? =
            if let directory { { _ in try PNGSequence(directory: directory) } } else { nil }
        let makeDecoder: @Sendable (VideoCodec) throws -> any VideoDecoder = { codec in try makeVideoDecoder(for: codec) }
        return try await subscriber.run(
            frameLimit: frameLimit, audio: true,
            makeDecoder: decodes ? makeDecoder : nil,
            makeRenderer: makeRenderer,
            makeSink: { stream throws -> any EncodedFrameSink in
                var sinks: [any EncodedFrameSink] = []
                if printing { sinks.append(LiveFramePrinter(json: json, output: output)) }
                if let outputPath {
                    // Said when the stream is announced, not at its first frame: WebM cannot carry H.264.
                    if let refusal = RecordingContainer.refusal(path: outputPath, codec: stream.properties.codec) {
                        throw RecordingError(.unsupportedContent, refusal)
                    }
                    sinks.append(RecordingSink(
                        path: outputPath, framesPerSecond: stream.properties.estimatedFramesPerSecond, audio: stream.properties.audio))
                }
                return SinkGroup(sinks)
            },
            onWaiting: { sessionId in output(SubscriptionLines.waiting(sessionId: sessionId, json: json)) },
            onStream: { sessionId, stream in SubscriptionLines.stream(stream, sessionId: sessionId, json: json).map(output) },
            onPropertiesChanged: { stream in SubscriptionLines.propertiesChanged(stream, json: json).map(output) },
            onReceptionChanged: { reception, framesPerSecond in
                output(SubscriptionLines.receptionChanged(reception, streamFramesPerSecond: framesPerSecond, json: json))
            })
    }

    /// Runs `body` in a ServiceGroup until it returns, or until SIGINT or SIGTERM shuts the group down gracefully,
    /// which cancels it (a subscription then returns what it has).
    static func untilShutdownSignal<Value: Sendable>(
        logger: Logger, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let service = OneShotService(body)
        // The group's own lifecycle lines are not the connection's progress that --verbose shows.
        var groupLogger = logger
        groupLogger.logLevel = .warning
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)], gracefulShutdownSignals: [.sigterm, .sigint], logger: groupLogger))
        try await group.run()
        return try service.outcome()
    }
}
