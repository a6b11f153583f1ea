import Foundation
public import Logging
public import ScreenMedia
public import ScreenWire
public import ScreenTransport

/// Publishes encoded frames to screenrelay as one screen-type stream: an ``EncodedFrameSink`` for the capture
/// thread and a network side (``run()``) for an async task.
///
/// The capture thread never waits for the network: frames go into a small queue (``PublishQueue``, bounded in
/// time). Keyframe requests from the relay reach the encoder through `keyframeRequests`. Sound
/// (``writeAudio(_:)``, from the audio thread) waits in the same queue's own bound and is sent ahead of video.
///
/// With a relay of protocol 3, the publisher asks for acknowledgements and follows its uplink with an
/// ``UplinkController``: the encoder's target rate and when it holds frames back go to the capture thread
/// through `pacing`. Frames are held while one waits to be sent or while more is in flight than the link carries
/// in the controller's target delay, so no socket buffer below holds more than that either.
public final class RelayPublisher: EncodedFrameSink, ConcurrentAudioSink {
    public let transport: any RelayTransport
    public let streamName: String
    private let token: String
    private let logger: Logger
    private let clock = MonotonicClock()
    public let keyframeRequests: KeyframeRequestFlag
    private let onSignal: @Sendable (Signal) -> Void
    private let state: Locked<State>
    public let reconnection: ReconnectStateMachine.Policy
    /// Ends a backoff wait as soon as the stream is finished.
    private let finishedEvent = OneShotEvent()
    /// Where the uplink controller's say goes to the capture thread.
    private let pacing: EncoderPacing.Voice?

    /// Seconds of capture time the queued frames may span before new deltas are dropped until a keyframe.
    static let queueSeconds = 2.0
    /// Audio frames (20 ms each) the network side may fall behind by before the oldest are dropped.
    static let audioQueueLimit = 25

    private struct PendingAudio: Sendable {
        var codec: AudioCodec
        var payload: [UInt8]
        var channels: Int
        var samples: Int
        var captureTime: MediaTime
        var wallClockMilliseconds: Int64
        var isSilence: Bool
    }

    private struct PendingFrame: QueuedVideoFrame {
        var codec: VideoCodec
        var payload: [UInt8]
        var isKeyframe: Bool
        var width: Int
        var height: Int
        var captureTime: MediaTime
        var wallClockMilliseconds: Int64
        var metadata: FrameMetadata
        var temporalLayer: Int

        var captureSeconds: Double { captureTime.seconds }
        var byteCount: Int { payload.count }
    }

    private struct State: Sendable {
        var queue = PublishQueue<PendingFrame, PendingAudio>(
            maximumVideoSeconds: RelayPublisher.queueSeconds, audioLimit: RelayPublisher.audioQueueLimit)
        /// The uplink as the relay's acknowledgements show it.
        var uplink: UplinkController?
        /// The relay of the current connection acknowledges frames.
        var acknowledged = false
        /// The relay of the current connection takes temporal layer ids in the media header (protocol 3).
        var relayReadsLayers = false
        /// The uplink as last reported to the relay (`uplink`), and when.
        var reportedUplink: (target: Int, estimate: Int?, at: Double)?

        /// The uplink to report now: when it changed, at most every 2 s.
        mutating func uplinkReportDue(now: Double) -> (target: Int, estimate: Int?)? {
            guard acknowledged, let uplink else { return nil }
            let current = (target: uplink.targetKbps, estimate: uplink.deliveryKbps)
            if let last = reportedUplink, (last.target == current.target && last.estimate == current.estimate) || now - last.at < 2 { return nil }
            reportedUplink = (current.target, current.estimate, now)
            return current
        }
        /// The stream's sound as announced (nil: none); false while muted.
        var audio: AudioProperties?
        var audioEnabled = true
        var audioCaptureDelayMilliseconds: Double?
        var finished = false
        var failure: RelayClientError?
        /// Capture tick → encoded frame in hand, smoothed: the stream's estimated capture delay.
        var captureDelayMilliseconds: Double?
        /// Wakes the current connection's sender (a new one per connection).
        var wakeUp: AsyncStream<Void>.Continuation?
        /// False while the share is paused (announced as the stream's `hasVideo`).
        var videoEnabled = true
        var framesPerSecond: Double
        /// Counts changes of the announced properties, so that the sender re-announces after each.
        var propertiesRevision = 0
        var connection = ConnectionStatus()
        var everConnected = false
    }

    /// The publisher's connection as `screenpub status` shows it.
    public struct ConnectionStatus: Sendable {
        /// Connected and welcomed by the relay.
        public var connected = false
        public var sessionId: String?
        public var streamId: UInt32?
        /// Other connections in the session (viewers, screensub, moderators).
        public var otherConnections = 0
        /// The last connection problem, cleared on connecting.
        public var lastProblem: String?
        /// Whether the relay has welcomed this publisher at least once since it started.
        public var everConnected = false
        /// The encoder's target now, what the uplink was measured to deliver (kbit/s) and why the target is what
        /// it is; nil without an uplink controller.
        public var targetKbps: Int?
        public var uplinkKbps: Int?
        public var rateReason: String?
    }

    public init(
        transport: any RelayTransport, token: String, streamName: String = "screen", framesPerSecond: Double,
        keyframeRequests: KeyframeRequestFlag = KeyframeRequestFlag(), reconnection: ReconnectStateMachine.Policy = .init(),
        audio: AudioProperties? = nil, uplink: UplinkController.Configuration? = nil, pacing: EncoderPacing.Voice? = nil,
        logger: Logger, onSignal: @escaping @Sendable (Signal) -> Void = { _ in }
    ) {
        self.pacing = pacing
        self.reconnection = reconnection
        self.onSignal = onSignal
        self.transport = transport
        self.token = token
        self.streamName = streamName
        var initial = State(framesPerSecond: framesPerSecond)
        initial.audio = audio
        initial.uplink = uplink.map(UplinkController.init)
        self.state = Locked(initial)
        self.keyframeRequests = keyframeRequests
        self.logger = logger
    }

    /// Where the stream goes, for logs.
    public var endpoint: String { transport.endpoint }

    /// Frames dropped because the connection fell behind.
    public var droppedFrames: Int { state.value.queue.droppedVideoFrames }

    public var connectionStatus: ConnectionStatus {
        state.withLock { state in
            var status = state.connection
            status.everConnected = state.everConnected
            if let uplink = state.uplink {
                status.targetKbps = uplink.targetKbps
                status.uplinkKbps = uplink.deliveryKbps
                status.rateReason = state.acknowledged || !state.connection.connected
                    ? uplink.reason.description : "the configured --bitrate (the relay does not acknowledge frames: it predates protocol 3)"
            }
            return status
        }
    }

    private func seconds() -> Double { Double(clock.nanoseconds(fromTicks: clock.now())) / 1e9 }

    /// Tells the capture thread what the uplink allows: frames wait while one is queued already, or until the
    /// link has nearly carried what is in flight (``UplinkController/framesWaitUntil(queuedBytes:)``).
    private func updatePacing(_ state: inout State) {
        guard let pacing else { return }
        if let uplink = state.uplink { pacing.setTarget(kbps: uplink.targetKbps) }
        let waitUntil = state.uplink?.framesWaitUntil(queuedBytes: state.queue.queuedVideoBytes) ?? -.infinity
        pacing.setHoldsFrames(untilSeconds: state.queue.queuedVideoFrames >= 1 ? .infinity : waitUntil)
    }

    /// Pauses (false) or resumes (true) the video: subscribers are told through the stream's `hasVideo`.
    /// The capture side stops handing frames meanwhile; on resuming, it sends a keyframe.
    public func setVideoEnabled(_ enabled: Bool) {
        changeProperties { $0.videoEnabled = enabled }
    }

    /// Mutes (false) or unmutes (true) the sound: subscribers are told through the stream's `hasAudio`.
    public func setAudioEnabled(_ enabled: Bool) {
        changeProperties { $0.audioEnabled = enabled }
    }

    /// Audio frames dropped because the connection fell behind.
    public var droppedAudioFrames: Int { state.value.queue.droppedAudioFrames }

    /// Announces a new frame rate (after a configuration reload).
    public func setFramesPerSecond(_ framesPerSecond: Double) {
        changeProperties { $0.framesPerSecond = framesPerSecond }
    }

    private func changeProperties(_ change: (inout State) -> Void) {
        let wakeUp = state.withLock { state in
            change(&state)
            state.propertiesRevision += 1
            return state.wakeUp
        }
        wakeUp?.yield()
    }

    // MARK: Capture thread

    public func write(_ frame: EncodedFrame) throws {
        let pending = PendingFrame(
            codec: frame.codec, payload: frame.payloadBytes, isKeyframe: frame.isKeyframe, width: frame.width,
            height: frame.height, captureTime: frame.captureTime, wallClockMilliseconds: frame.wallClock.millisecondsSince1970,
            metadata: frame.metadata, temporalLayer: frame.temporalLayer)
        let now = clock.mediaTime(fromTicks: clock.now()).converted(to: MediaTime.nanosecondTimescale).value
        let delay = Double(now - frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value) / 1_000_000
        let failure = state.withLock { state -> RelayClientError? in
            if let failure = state.failure { return failure }
            state.captureDelayMilliseconds = state.captureDelayMilliseconds.map { 0.9 * $0 + 0.1 * delay } ?? delay
            if state.queue.push(video: pending) { keyframeRequests.request() }
            updatePacing(&state)
            return nil
        }
        if let failure { throw failure }
        state.value.wakeUp?.yield()
    }

    /// Queues one audio frame (on the audio thread); sent ahead of queued video frames.
    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        let pending = PendingAudio(
            codec: frame.codec, payload: Array(frame.payload), channels: frame.channels, samples: frame.samples,
            captureTime: frame.captureTime, wallClockMilliseconds: frame.wallClock.millisecondsSince1970, isSilence: frame.isSilence)
        let now = clock.mediaTime(fromTicks: clock.now()).converted(to: MediaTime.nanosecondTimescale).value
        let delay = Double(now - frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value) / 1_000_000
        let wakeUp = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard state.failure == nil, !state.finished, state.audio != nil else { return nil }
            state.audioCaptureDelayMilliseconds = state.audioCaptureDelayMilliseconds.map { 0.9 * $0 + 0.1 * delay } ?? delay
            state.queue.push(audio: pending)
            return state.wakeUp
        }
        wakeUp?.yield()
    }

    public func finish() throws {
        let wakeUp = state.withLock { state in
            state.finished = true
            return state.wakeUp
        }
        wakeUp?.yield()
        finishedEvent.signal()
    }

    // MARK: Network

    /// Connects, publishes at the first frame and sends frames until ``finish()``; then unpublishes and closes.
    /// When the connection cannot be made or is lost, it tries again after a backoff (``reconnection``) and
    /// publishes anew, starting with a keyframe; frames captured meanwhile are dropped, never queued without
    /// bound. Throws when the relay refuses the token or role (the capture thread's next write then throws
    /// too), or on any failure when reconnection is off.
    public func run() async throws {
        do {
            try await ReconnectStateMachine.keepConnected(
                policy: reconnection, finished: finishedEvent, isFinished: { state.value.finished },
                lastProblem: { state.value.connection.lastProblem },
                recordFailure: { failure in state.withLock { $0.connection = ConnectionStatus(lastProblem: failure.message) } },
                logger: logger, connectOnce: connectOnce)
        } catch let failure as RelayClientError {
            state.withLock { $0.failure = failure }
            throw failure
        }
    }

    /// One connection: hello, publish at the first frame, send until finished (returns) or lost (throws).
    private func connectOnce() async throws {
        // A new stream starts with a keyframe: frames queued for a connection that is gone are dropped.
        let (wakeUps, wakeUp) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        state.withLock { state in
            state.wakeUp?.finish()
            state.wakeUp = wakeUp
            if state.queue.startNewStream() { keyframeRequests.request() }
            state.acknowledged = false
            state.reportedUplink = nil
            state.uplink?.connectionChanged()
            updatePacing(&state)
        }
        wakeUp.yield()
        try await RelayClient.connect(transport: transport, token: token, client: "screenpub/\(ScreenpubVersion.current)", logger: logger) { [self] link, events in
            guard let welcome = try await events.nextControl() else {
                throw RelayClientError(.closed, "the relay closed the connection before welcoming us")
            }
            if case .error(let code, let message) = welcome { throw RelayClientError(.refused(code), "the relay refused: \(message.escapingControlCharacters)") }
            guard case .welcome(_, let sessionId, _, _, let connections, let protocolVersion) = welcome else {
                throw RelayClientError(.closed, "the relay did not welcome us")
            }
            state.withLock {
                $0.connection = ConnectionStatus(connected: true, sessionId: sessionId, otherConnections: max(0, connections.count - 1))
                $0.everConnected = true
                $0.acknowledged = protocolVersion >= 3 && $0.uplink != nil
                $0.relayReadsLayers = protocolVersion >= 3
            }
            logger.info("connected to \(endpoint), session \(sessionId)")
            // The relay's answers to `publish`, from the reader to the sender.
            let (publishedIds, published) = AsyncStream<UInt32>.makeStream()
            // Sending runs beside reading; when sending is done it closes the link, which ends reading.
            let sender = Task { try await self.sendFrames(link, publishedIds: publishedIds, wakeUps: wakeUps) }
            do {
                defer { published.finish() }
                try await self.readEvents(events, published: published)
            } catch {
                sender.cancel()
                throw error
            }
            try await sender.value
        }
    }

    private func readEvents(_ events: RelayEvents, published: AsyncStream<UInt32>.Continuation) async throws {
        while let event = try await events.next() {
            guard case .control(let message) = event else { continue }
            switch message {
            case .published(let stream):
                published.yield(stream.streamId)
                state.withLock { $0.connection.streamId = stream.streamId }
                logger.info("publishing stream \(stream.streamId) (\(stream.properties.width)×\(stream.properties.height), \(stream.properties.codec))")
            case .requestKeyframe:
                keyframeRequests.request()
            case .ack(_, let sequence, let receivedAt):
                let now = seconds()
                state.withLock { state in
                    guard state.acknowledged, state.uplink != nil else { return }
                    if state.uplink!.acknowledged(sequence: sequence, receivedAt: receivedAt, now: now) {
                        logger.debug("uplink: target \(state.uplink!.targetKbps) kbit/s (\(state.uplink!.reason.description))")
                    }
                    updatePacing(&state)
                }
            case .connectionCreated:
                state.withLock { $0.connection.otherConnections += 1 }
            case .connectionDestroyed:
                state.withLock { $0.connection.otherConnections = max(0, $0.connection.otherConnections - 1) }
            case .signal(let signal):
                onSignal(signal)
            case .error(let code, let message) where code == .invalidSignal || code == .notFound:
                logger.warning("the relay answered \(code.rawValue): \(message.escapingControlCharacters)")
            case .error(let code, let message):
                throw RelayClientError(.refused(code), "the relay answered \(code.rawValue): \(message.escapingControlCharacters)")
            default: continue
            }
        }
        if !state.value.finished { throw RelayClientError(.closed, "the relay closed the connection") }
    }

    private func sendFrames(_ link: RelayLink, publishedIds: AsyncStream<UInt32>, wakeUps: AsyncStream<Void>) async throws {
        var answers = publishedIds.makeAsyncIterator()
        var published: (id: UInt32, properties: StreamProperties, revision: Int)?
        var sequence: UInt64 = 0
        var audioSequence: UInt64 = 0
        for await _ in wakeUps {
            if let stream = published {
                let (revision, videoEnabled, audioEnabled, framesPerSecond) = state.withLock {
                    ($0.propertiesRevision, $0.videoEnabled, $0.audioEnabled, $0.framesPerSecond)
                }
                if revision != stream.revision {
                    var properties = stream.properties
                    properties.hasVideo = videoEnabled
                    properties.hasAudio = audioEnabled && videoEnabled
                    properties.estimatedFramesPerSecond = framesPerSecond
                    try await link.send(.streamPropertyChanged(streamId: stream.id, properties: properties))
                    published = (stream.id, properties, revision)
                }
            }
            while true {
                // Sound first: it is small and a picture's transfer must not delay it.
                if let stream = published {
                    while let audio = state.withLock({ $0.queue.nextAudio() }) {
                        let header = AudioFrameHeader(
                            streamID: stream.id, sequence: audioSequence, codec: audio.codec, channels: audio.channels,
                            samples: audio.samples, captureTime: audio.captureTime, wallClockMilliseconds: audio.wallClockMilliseconds,
                            isSilence: audio.isSilence, payloadLength: audio.payload.count)
                        try await link.send(header, payload: audio.payload)
                        audioSequence += 1
                    }
                }
                let (next, finished, measures, layers) = state.withLock { state -> (PendingFrame?, Bool, Bool, Bool) in
                    let next = state.queue.nextVideo()
                    if next == nil { updatePacing(&state) }
                    return (next, state.finished, state.acknowledged, state.relayReadsLayers)
                }
                guard let frame = next else {
                    if finished {
                        if let published { try await link.send(.unpublish(streamId: published.id)) }
                        try await link.close()
                        return
                    }
                    break
                }
                // The stream is announced at its first frame, when codec and size are known.
                let id: UInt32
                if let published {
                    id = published.id
                } else {
                    published = try await publish(frame, link: link, answers: &answers)
                    id = published!.id
                }
                let header = MediaFrameHeader(
                    streamID: id, sequence: sequence,
                    flags: (frame.isKeyframe ? MediaFrameHeader.Flags.keyframe : []).union(layers ? .layer(frame.temporalLayer) : []),
                    codec: frame.codec,
                    width: frame.width, height: frame.height, captureTime: frame.captureTime,
                    wallClockMilliseconds: frame.wallClockMilliseconds, metadata: frame.metadata,
                    payloadLength: frame.payload.count)
                if measures {
                    let now = seconds()
                    state.withLock { state in
                        state.uplink?.sent(sequence: sequence, bytes: header.encodedSize + frame.payload.count, now: now)
                        updatePacing(&state)
                    }
                }
                try await link.send(header, payload: frame.payload)
                if !measures { state.withLock { updatePacing(&$0) } }
                if measures, let report = state.withLock({ $0.uplinkReportDue(now: seconds()) }) {
                    try await link.send(.uplink(streamId: id, targetKbps: report.target, estimatedKbps: report.estimate))
                }
                sequence += 1
            }
        }
    }

    /// Sends `publish` and waits for the relay's `published`, which ``readEvents(_:published:)`` passes on.
    private func publish(
        _ frame: PendingFrame, link: RelayLink, answers: inout AsyncStream<UInt32>.Iterator
    ) async throws -> (id: UInt32, properties: StreamProperties, revision: Int) {
        let current = state.value
        var audio = current.audio
        audio?.estimatedCaptureDelayMilliseconds = ((current.audioCaptureDelayMilliseconds ?? 0) * 10).rounded() / 10
        let properties = StreamProperties(
            videoType: .screen, codec: frame.codec, width: frame.width, height: frame.height,
            estimatedFramesPerSecond: current.framesPerSecond,
            estimatedCaptureDelayMilliseconds: ((current.captureDelayMilliseconds ?? 0) * 10).rounded() / 10,
            hasVideo: current.videoEnabled, audio: audio, hasAudio: current.audioEnabled && current.videoEnabled,
            codecString: StreamProperties.codecString(
                frame.codec, keyframe: frame.payload, width: frame.width, height: frame.height,
                framesPerSecond: current.framesPerSecond))
        // Every frame screenpub codes above layer 0 predicts only from the newest layer-0 frame, and none from it
        // (ScreenCodec's TemporalLayers): a relay may leave out or send each one on its own.
        try await link.send(.publish(name: streamName, properties: properties, acks: current.acknowledged, discardableLayers: current.relayReadsLayers))
        guard let id = await answers.next() else {
            throw RelayClientError(.closed, "the relay closed the connection before accepting the stream")
        }
        return (id, properties, current.propertiesRevision)
    }
}
