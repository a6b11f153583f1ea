import Foundation
public import Logging
public import ScreenMedia
public import ScreenWire
public import ScreenTransport

/// What a subscription saw, when it ends.
public struct SubscriptionSummary: Sendable {
    public var sessionId = ""
    public var stream: StreamInfo?
    /// Video frames received.
    public var framesReceived = 0
    /// Audio frames received (with `audio` on).
    public var audioFramesReceived = 0
    /// Pictures decoded and rendered.
    public var framesRendered = 0
    /// Catch-up frames (the relay's cached pictures, decoded and not shown), and frames meant to be shown that
    /// were left out because they were older than one already received (a relay that replays the past).
    public var catchUpFrames = 0
    public var staleFrames = 0
    /// Why it ended: the frame limit, the stream ending (its reason), or the connection closing.
    public var ending = ""
    /// The connection closed before the stream ended, the frame limit was reached or it was stopped: the relay
    /// went away (or closed it), and what was received may be short of what was asked for.
    public var connectionLost = false
    /// The codec of the rendition the relay last sent the stream in (protocol 7); nil: the stream as published.
    public var rendition: VideoCodec?
}

/// Subscribes to one stream of a session (the seed's `OTSubscriber`): picks the stream (a given id, or the
/// first published), hands each received frame to an ``EncodedFrameSink`` (a recording, a printer), decodes
/// it (unless `makeDecoder` is nil) and hands the picture with its metadata and timing to a ``VideoRenderer``. With `audio`, it also asks for
/// the stream's sound, whose frames go to the sink when it is an ``EncodedAudioSink``.
///
/// Decoder, renderer and sink are made by factories on the subscription's own task, so none of them has to
/// be `Sendable`: they are used by that one task only. A frame that cannot be decoded is skipped and a
/// keyframe requested; decoding resumes at the next keyframe.
public struct StreamSubscriber: Sendable {
    public let transport: any RelayTransport
    public let token: String
    public let streamId: UInt32?
    public let client: String
    /// What it tells the relay it decodes (protocol 7's `decodes`); nil: it decodes whatever is published.
    public let decodes: [String]?
    let logger: Logger

    public init(
        transport: any RelayTransport, token: String, streamId: UInt32? = nil, client: String = "screensub", decodes: [String]? = nil,
        logger: Logger
    ) {
        self.decodes = decodes
        self.transport = transport
        self.token = token
        self.streamId = streamId
        self.client = client
        self.logger = logger
    }

    /// Runs until the stream ends, the connection closes, `frameLimit` frames have arrived or its task is
    /// cancelled (then it returns what it has, ending "stopped").
    /// `onWaiting` hears that the session has no stream yet (at the welcome); `onStream` is told which stream was
    /// chosen; renderer and sink are made for it then; `onPropertiesChanged`
    /// hears when its publisher pauses or resumes it (`hasVideo`) or changes its frame rate. Throws ``RelayClientError`` when the relay refuses.
    public func run(
        frameLimit: Int? = nil, audio: Bool = false,
        makeDecoder: (@Sendable (VideoCodec) throws -> any VideoDecoder)?,
        makeRenderer: (@Sendable (StreamInfo) throws -> any VideoRenderer)? = nil,
        makeSink: (@Sendable (StreamInfo) throws -> any EncodedFrameSink)? = nil,
        onWaiting: @escaping @Sendable (String) -> Void = { _ in },
        onStream: @escaping @Sendable (String, StreamInfo) -> Void = { _, _ in },
        onPropertiesChanged: @escaping @Sendable (StreamInfo) -> Void = { _ in },
        onReceptionChanged: @escaping @Sendable (Reception, _ streamFramesPerSecond: Double) -> Void = { _, _ in }
    ) async throws -> SubscriptionSummary {
        let wanted = streamId
        let (logger, decodes) = (logger, decodes)
        return try await RelayClient.connect(transport: transport, token: token, client: client, logger: logger) { link, events in
            var summary = SubscriptionSummary()
            var decoder: (any VideoDecoder)?
            var waitingForKeyframe = true
            // The capture time of the newest frame handed to the sink.
            var newestWritten: MediaTime?
            var renderer: (any VideoRenderer)?
            var sink: (any EncodedFrameSink)?
            /// The sink's audio side, when it takes sound (looked up once, not per frame).
            var audioSink: (any EncodedAudioSink)?
            /// The rendition whose frames carry the stream's pictures (`renditionChanged`), if one does.
            var renditionId: UInt32?
            defer { try? sink?.finish() }

            func choose(_ candidates: [StreamInfo]) async throws {
                guard summary.stream == nil,
                    let chosen = candidates.first(where: { wanted == nil ? $0.properties.videoType == .screen : $0.streamId == wanted })
                        ?? candidates.first(where: { _ in wanted == nil })
                else { return }
                summary.stream = chosen
                logger.debug("subscribing to stream \(chosen.streamId) \"\(chosen.name)\"")
                onStream(summary.sessionId, chosen)
                renderer = try makeRenderer?(chosen)
                sink = try makeSink?(chosen)
                audioSink = sink as? any EncodedAudioSink
                try await link.send(.subscribe(streamId: chosen.streamId, audio: audio, layers: true, catchUp: true, decodes: decodes))
            }

            while true {
                let next: RelayEvent?
                do {
                    next = try await events.next()
                } catch where Task.isCancelled {
                    // Stopped (Ctrl-C): what arrived is kept, the recording finished by the defer above.
                    summary.ending = "stopped"
                    return summary
                }
                guard let event = next else { break }
                switch event {
                case .control(.welcome(_, let sessionId, _, let known, _, _)):
                    summary.sessionId = sessionId
                    logger.debug("welcomed into session \(sessionId) with \(known.count) stream(s)")
                    try await choose(known)
                    // Nobody publishes yet: say so, rather than sit silent until someone does.
                    if summary.stream == nil { onWaiting(sessionId) }
                case .control(.streamCreated(let stream)):
                    try await choose([stream])
                case .control(.streamDestroyed(let id, let reason)) where id == summary.stream?.streamId:
                    summary.ending = "the stream ended (\(reason))"
                    return summary
                case .control(.streamPropertyChanged(let id, let properties)) where id == summary.stream?.streamId:
                    summary.stream?.properties = properties
                    if let stream = summary.stream { onPropertiesChanged(stream) }
                case .control(.renditionChanged(let id, let rendition)) where id == summary.stream?.streamId:
                    renditionId = rendition?.streamId
                    summary.rendition = rendition?.properties.codec
                    waitingForKeyframe = true
                    logger.debug("the relay sends the stream as \(rendition.map { "its \($0.properties.codec) rendition, stream \($0.streamId)" } ?? "published")")
                case .control(.subscriptionChanged(let id, let highestLayer, let layers, let waiting)) where id == summary.stream?.streamId:
                    let reception = Reception(highestLayer: highestLayer, layers: layers, waitingForKeyframe: waiting)
                    onReceptionChanged(reception, summary.stream?.properties.estimatedFramesPerSecond ?? 0)
                case .control(.error(let code, let message)):
                    throw RelayClientError(.refused(code), "the relay answered \(code.rawValue): \(message)")
                case .audio(let header, let payload):
                    guard header.streamID == summary.stream?.streamId else { continue }
                    summary.audioFramesReceived += 1
                    try payload.withUnsafeReadableBytes { bytes in
                        try audioSink?.writeAudio(EncodedAudioFrame(
                            codec: header.codec, payload: bytes, channels: header.channels, samples: header.samples,
                            captureTime: header.captureTime, wallClock: WallClockTime(millisecondsSince1970: header.wallClockMilliseconds),
                            isSilence: header.isSilence))
                    }
                case .media(let header, let payload):
                    guard header.streamID == (renditionId ?? summary.stream?.streamId) else { continue }
                    summary.framesReceived += 1
                    let catchUp = header.flags.isCatchUp
                    if catchUp { summary.catchUpFrames += 1 }
                    let wallClock = WallClockTime(millisecondsSince1970: header.wallClockMilliseconds)
                    // What is written (a recording, the printed lines) never goes back in time: a cached picture
                    // older than one already written is only decoded.
                    if let newestWritten, header.captureTime < newestWritten {
                        if !catchUp { summary.staleFrames += 1 }
                    } else {
                        newestWritten = header.captureTime
                        try payload.withUnsafeReadableBytes { bytes in
                            var frame = EncodedFrame(
                                codec: header.codec, payload: bytes, isKeyframe: header.isKeyframe, width: header.width,
                                height: header.height, captureTime: header.captureTime, wallClock: wallClock, metadata: header.metadata,
                                temporalLayer: header.temporalLayer)
                            frame.isCatchUp = catchUp
                            try sink?.write(frame)
                        }
                    }
                    if header.isKeyframe { waitingForKeyframe = false }
                    if !waitingForKeyframe, let makeDecoder {
                        if decoder?.codec != header.codec { decoder = try makeDecoder(header.codec) }
                        // A renderer's failure (a full disk) ends the subscription; a decoder's only skips frames.
                        var renderFailure: (any Error)?
                        do {
                            try payload.withUnsafeReadableBytes { bytes in
                                try decoder?.decode(bytes, captureTime: header.captureTime, wallClock: wallClock, metadata: header.metadata) { picture in
                                    guard !catchUp else { return }
                                    summary.framesRendered += 1
                                    do { try renderer?.render(picture) } catch { renderFailure = error }
                                }
                            }
                        } catch where renderFailure == nil {
                            logger.warning("frame \(header.sequence) could not be decoded (\(error)); waiting for a keyframe")
                            waitingForKeyframe = true
                            try await link.send(.requestKeyframe(streamId: header.streamID))
                        }
                        if let renderFailure { throw renderFailure }
                    }
                    if let frameLimit, summary.framesReceived >= frameLimit {
                        summary.ending = "\(frameLimit) frames received"
                        return summary
                    }
                default:
                    continue
                }
            }
            summary.ending = Task.isCancelled ? "stopped" : "the relay closed the connection"
            summary.connectionLost = !Task.isCancelled
            return summary
        }
    }
}
