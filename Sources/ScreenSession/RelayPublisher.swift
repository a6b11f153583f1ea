import Foundation
public import Logging
public import ScreenMedia
public import ScreenWire
public import ScreenTransport

/// Publishes encoded frames to screenrelay as one screen-type stream: an ``EncodedFrameSink`` for the capture
/// thread and a network side (``run()``) for an async task.
///
/// The capture thread never waits for the network: frames go into a small queue (``PublishQueue``, bounded in
/// time). Keyframe requests from the relay reach the encoder through `pictureRequests`. Sound
/// (``writeAudio(_:)``, from the audio thread) waits in the same queue's own bound and is sent ahead of video.
///
/// With a relay of protocol 3, the publisher asks for acknowledgements and follows its uplink with an
/// ``UplinkController``: the encoder's target rate and when it holds frames back go to the capture thread
/// through `pacing`. Frames are held while one waits to be sent or while more is in flight than the link carries
/// in the controller's target delay, so no socket buffer below holds more than that either. Over a socket of its own
/// (``ScreenTransport/RelayOutbound/socket``), the publisher paces it at the target and times what it writes to it
/// idle until the kernel holds none of it, a measure of the link beside the acknowledgements (RelayPublisher+Socket).
///
/// With a relay of protocol 7, it offers a second rendition in each codec of `renditionCodecs` (`publish` with
/// `renditions`): when the relay asks (`startRendition`), `renditions` tells the capture thread to encode it, its
/// frames come through ``renditionSink`` into a queue of their own, and they go out as a stream of their own
/// (`publishRendition`) after the share's own frames; when the relay says it is no longer needed, it is
/// unpublished.
public final class RelayPublisher: EncodedFrameSink, ConcurrentAudioSink {
    public let transport: any RelayTransport
    public let streamName: String
    private let token: String
    let logger: Logger
    private let clock = MonotonicClock()
    public let pictureRequests: PictureRequests
    private let onSignal: @Sendable (Signal) -> Void
    let state: Locked<State>
    public let reconnection: ReconnectStateMachine.Policy
    /// Ends a backoff wait as soon as the stream is finished.
    private let finishedEvent = OneShotEvent()
    /// Where the uplink controller's say goes to the capture thread.
    private let pacing: EncoderPacing.Voice?
    /// The second rendition asked of the capture thread, and the codecs it may be in.
    public let renditions: RenditionRequests
    let renditionCodecs: [VideoCodec]

    /// Seconds of capture time the queued frames may span before new deltas are dropped until a keyframe.
    static let queueSeconds = 2.0
    /// Audio frames (20 ms each) the network side may fall behind by before the oldest are dropped.
    static let audioQueueLimit = 25

    struct PendingAudio: Sendable {
        var codec: AudioCodec
        var payload: [UInt8]
        var channels: Int
        var samples: Int
        var captureTime: MediaTime
        var wallClockMilliseconds: Int64
        var isSilence: Bool
    }

    struct PendingFrame: QueuedVideoFrame {
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

    struct State: Sendable {
        var queue = PublishQueue<PendingFrame, PendingAudio>(
            maximumVideoSeconds: RelayPublisher.queueSeconds, audioLimit: RelayPublisher.audioQueueLimit)
        /// The second rendition's frames (no sound: it is the stream's own).
        var renditionQueue = PublishQueue<PendingFrame, PendingAudio>(maximumVideoSeconds: RelayPublisher.queueSeconds, audioLimit: 0)
        /// The rendition's stream id on this connection, once published.
        var renditionStreamId: UInt32?
        var pacing: PublisherPacing
        var announced: AnnouncedProperties
        /// The relay of the current connection takes temporal layer ids in the media header (protocol 3).
        var relayReadsLayers = false
        var connection = ConnectionStatus()
        var everConnected = false
        var finished = false
        var failure: RelayClientError?
        /// Wakes the current connection's sender (a new one per connection).
        var wakeUp: AsyncStream<Void>.Continuation?
    }

    public init(
        transport: any RelayTransport, token: String, streamName: String = "screen", framesPerSecond: Double,
        pictureRequests: PictureRequests = PictureRequests(), reconnection: ReconnectStateMachine.Policy = .init(),
        audio: AudioProperties? = nil, uplink: UplinkController.Configuration? = nil, pacing: EncoderPacing.Voice? = nil,
        renditions: RenditionRequests = RenditionRequests(), renditionCodecs: [VideoCodec] = [],
        logger: Logger, onSignal: @escaping @Sendable (Signal) -> Void = { _ in }
    ) {
        self.renditions = renditions
        self.renditionCodecs = renditionCodecs
        self.pacing = pacing
        self.reconnection = reconnection
        self.onSignal = onSignal
        self.transport = transport
        self.token = token
        self.streamName = streamName
        self.state = Locked(State(
            pacing: PublisherPacing(uplink: uplink), announced: AnnouncedProperties(framesPerSecond: framesPerSecond, audio: audio)))
        self.pictureRequests = pictureRequests
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
            if let uplink = state.pacing.status(connected: state.connection.connected) {
                (status.targetKbps, status.uplinkKbps, status.rateReason) = (uplink.targetKbps, uplink.uplinkKbps, uplink.reason)
            }
            return status
        }
    }

    func seconds() -> Double { Double(clock.nanoseconds(fromTicks: clock.now())) / 1e9 }

    /// Tells the capture thread what the uplink allows (``PublisherPacing/advice(queuedFrames:queuedBytes:)``).
    func updatePacing(_ state: State) {
        guard let pacing else { return }
        let advice = state.pacing.advice(queuedFrames: state.queue.queuedVideoFrames, queuedBytes: state.queue.queuedVideoBytes)
        if let target = advice.targetKbps { pacing.setTarget(kbps: target) }
        pacing.setHoldsFrames(untilSeconds: advice.holdUntil)
    }

    /// Pauses (false) or resumes (true) the video: subscribers are told through the stream's `hasVideo`.
    /// The capture side stops handing frames meanwhile; on resuming, it sends a keyframe.
    public func setVideoEnabled(_ enabled: Bool) {
        changeProperties { $0.setVideoEnabled(enabled) }
    }

    /// Mutes (false) or unmutes (true) the sound: subscribers are told through the stream's `hasAudio`.
    public func setAudioEnabled(_ enabled: Bool) {
        changeProperties { $0.setAudioEnabled(enabled) }
    }

    /// Audio frames dropped because the connection fell behind.
    public var droppedAudioFrames: Int { state.value.queue.droppedAudioFrames }

    /// Announces a new frame rate (after a configuration reload).
    public func setFramesPerSecond(_ framesPerSecond: Double) {
        changeProperties { $0.setFramesPerSecond(framesPerSecond) }
    }

    private func changeProperties(_ change: (inout AnnouncedProperties) -> Void) {
        let wakeUp = state.withLock { state in
            change(&state.announced)
            return state.wakeUp
        }
        wakeUp?.yield()
    }

    // MARK: Capture thread

    public func write(_ frame: EncodedFrame) throws {
        let pending = PendingFrame(frame)
        let now = clock.mediaTime(fromTicks: clock.now()).converted(to: MediaTime.nanosecondTimescale).value
        let delay = Double(now - frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value) / 1_000_000
        let outcome = state.withLock { state -> Result<AsyncStream<Void>.Continuation?, RelayClientError> in
            if let failure = state.failure { return .failure(failure) }
            state.announced.noteCaptureDelay(delay)
            if state.queue.push(video: pending) { pictureRequests.requestKeyframe() }
            updatePacing(state)
            return .success(state.wakeUp)
        }
        try outcome.get()?.yield()
    }

    /// Queues one audio frame (on the audio thread); sent ahead of queued video frames.
    public func writeAudio(_ frame: EncodedAudioFrame) throws {
        let pending = PendingAudio(
            codec: frame.codec, payload: Array(frame.payload), channels: frame.channels, samples: frame.samples,
            captureTime: frame.captureTime, wallClockMilliseconds: frame.wallClock.millisecondsSince1970, isSilence: frame.isSilence)
        let now = clock.mediaTime(fromTicks: clock.now()).converted(to: MediaTime.nanosecondTimescale).value
        let delay = Double(now - frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value) / 1_000_000
        let wakeUp = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard state.failure == nil, !state.finished, state.announced.audio != nil else { return nil }
            state.announced.noteCaptureDelay(delay, audio: true)
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
            if state.queue.startNewStream() { pictureRequests.requestKeyframe() }
            _ = state.renditionQueue.startNewStream()
            state.renditionStreamId = nil
            state.pacing.connectionChanged()
            updatePacing(state)
        }
        // A new connection's relay asks for a rendition when its viewers need one.
        renditions.want(nil)
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
                $0.pacing.connected(acknowledges: protocolVersion >= 3)
                $0.relayReadsLayers = protocolVersion >= 3
            }
            logger.info("connected to \(endpoint), session \(sessionId)")
            // The relay's answers to `publish` and `publishRendition`, from the reader to the sender.
            let (publishedIds, published) = AsyncStream<UInt32>.makeStream()
            let (renditionIds, renditionPublished) = AsyncStream<UInt32>.makeStream()
            // Sending runs beside reading; when sending is done it closes the link, which ends reading. The socket
            // is watched beside both while what was written to it idle drains.
            let (socketWakeUps, socketWatch) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let watcher = link.socket.map { socket in Task { await self.watchSocket(socket, wakeUps: socketWakeUps) } }
            let sender = Task {
                try await self.sendFrames(
                    link, publishedIds: publishedIds, renditionIds: renditionIds, wakeUps: wakeUps, socketWatch: socketWatch,
                    offersRenditions: protocolVersion >= 7)
            }
            do {
                defer {
                    published.finish()
                    renditionPublished.finish()
                    socketWatch.finish()
                    watcher?.cancel()
                }
                try await self.readEvents(events, published: published, renditionPublished: renditionPublished)
            } catch {
                sender.cancel()
                throw error
            }
            try await sender.value
        }
    }

    private func readEvents(
        _ events: RelayEvents, published: AsyncStream<UInt32>.Continuation, renditionPublished: AsyncStream<UInt32>.Continuation
    ) async throws {
        while let event = try await events.next() {
            guard case .control(let message) = event else { continue }
            switch message {
            case .published(let stream) where stream.renditionOf != nil:
                renditionPublished.yield(stream.streamId)
                state.withLock { $0.renditionStreamId = stream.streamId }
                logger.info("publishing the \(stream.properties.codec) rendition of the share as stream \(stream.streamId), for viewers or HLS players that decode nothing else")
            case .startRendition(_, let codec) where renditionCodecs.contains(codec):
                renditions.want(codec)
            case .stopRendition(_, let codec) where renditions.wantedCodec == codec:
                renditions.want(nil)
                state.value.wakeUp?.yield()
            case .requestKeyframe(let streamId) where streamId == state.value.renditionStreamId:
                renditions.requestKeyframe()
            case .published(let stream):
                published.yield(stream.streamId)
                state.withLock { $0.connection.streamId = stream.streamId }
                logger.info("publishing stream \(stream.streamId) (\(stream.properties.width)×\(stream.properties.height), \(stream.properties.codec))")
            case .requestKeyframe:
                pictureRequests.requestKeyframe()
            case .requestRefresh:
                pictureRequests.requestRefresh()
            case .ack(_, let sequence, let receivedAt):
                let now = seconds()
                let changed = state.withLock { state in
                    defer { updatePacing(state) }
                    return state.pacing.acknowledged(sequence: sequence, receivedAt: receivedAt, now: now) ? state.pacing.status(connected: true) : nil
                }
                if let changed { logger.debug("uplink: target \(changed.targetKbps) kbit/s (\(changed.reason))") }
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

    /// The sender of one connection: on each wake-up, announces what changed of the stream, then sends the queued
    /// sound and pictures until the queue is empty; once finished, unpublishes and closes the link.
    private func sendFrames(
        _ link: RelayLink, publishedIds: AsyncStream<UInt32>, renditionIds: AsyncStream<UInt32>, wakeUps: AsyncStream<Void>,
        socketWatch: AsyncStream<Void>.Continuation, offersRenditions: Bool
    ) async throws {
        var sender = StreamSender(
            link: link, answers: publishedIds.makeAsyncIterator(), renditionAnswers: renditionIds.makeAsyncIterator(),
            offersRenditions: offersRenditions, socketWatch: socketWatch)
        for await _ in wakeUps {
            try await announceChanges(&sender)
            while true {
                // Sound first: it is small and a picture's transfer must not delay it.
                try await sendAudio(&sender)
                let (next, finished, layers) = state.withLock { state -> (PendingFrame?, Bool, Bool) in
                    let next = state.queue.nextVideo()
                    if next == nil { updatePacing(state) }
                    return (next, state.finished, state.relayReadsLayers)
                }
                if let frame = next {
                    try await sendVideo(frame, readsLayers: layers, &sender)
                } else if let frame = state.withLock({ $0.renditionQueue.nextVideo() }) {
                    // The rendition's frames after the share's own: its viewers are the ones that can wait.
                    try await sendRendition(frame, &sender)
                } else if finished {
                    if let published = sender.published { try await link.send(.unpublish(streamId: published.id)) }
                    try await link.close()
                    return
                } else {
                    try await unpublishStoppedRendition(&sender)
                    break
                }
            }
        }
    }

    /// Tells the relay of a pause, mute or new frame rate since the stream was announced.
    private func announceChanges(_ sender: inout StreamSender) async throws {
        guard let stream = sender.published else { return }
        let announced = state.value.announced
        guard announced.revision != stream.revision else { return }
        let properties = announced.updated(stream.properties)
        try await sender.link.send(.streamPropertyChanged(streamId: stream.id, properties: properties))
        sender.published = (stream.id, properties, announced.revision)
    }

    private func sendAudio(_ sender: inout StreamSender) async throws {
        guard let stream = sender.published else { return }
        while let audio = state.withLock({ $0.queue.nextAudio() }) {
            let header = AudioFrameHeader(
                streamID: stream.id, sequence: sender.audioSequence, codec: audio.codec, channels: audio.channels,
                samples: audio.samples, captureTime: audio.captureTime, wallClockMilliseconds: audio.wallClockMilliseconds,
                isSilence: audio.isSilence, payloadLength: audio.payload.count)
            let now = seconds()
            state.withLock { $0.pacing.writing(bytes: header.encodedSize + audio.payload.count, pendingBefore: nil, now: now) }
            try await sender.link.send(header, payload: audio.payload)
            sender.audioSequence += 1
        }
    }

    /// Sends one picture, publishing the stream at its first (when codec and size are known), and reports the
    /// uplink when that is due.
    private func sendVideo(_ frame: PendingFrame, readsLayers: Bool, _ sender: inout StreamSender) async throws {
        let published: (id: UInt32, properties: StreamProperties, revision: Int)
        if let stream = sender.published {
            published = stream
        } else {
            published = try await publish(frame, link: sender.link, answers: &sender.answers, offersRenditions: sender.offersRenditions)
            sender.published = published
        }
        let sequence = sender.sequence
        let header = frame.header(streamId: published.id, sequence: sequence, readsLayers: readsLayers)
        await prepareSocket(writing: header.encodedSize + frame.payload.count, sender)
        let now = seconds()
        state.withLock { state in
            state.pacing.sent(sequence: sequence, bytes: header.encodedSize + frame.payload.count, now: now)
            updatePacing(state)
        }
        try await sender.link.send(header, payload: frame.payload)
        let report = state.withLock { state in
            defer { updatePacing(state) }
            return state.pacing.reportDue(now: seconds())
        }
        if let report { try await sender.link.send(.uplink(streamId: published.id, targetKbps: report.target, estimatedKbps: report.estimate)) }
        sender.sequence += 1
    }

    /// Sends `publish` and waits for the relay's `published`, which ``readEvents(_:published:)`` passes on.
    private func publish(
        _ frame: PendingFrame, link: RelayLink, answers: inout AsyncStream<UInt32>.Iterator, offersRenditions: Bool
    ) async throws -> (id: UInt32, properties: StreamProperties, revision: Int) {
        let (announced, acknowledged, readsLayers) = state.withLock { ($0.announced, $0.pacing.measures, $0.relayReadsLayers) }
        let properties = announced.properties(codec: frame.codec, width: frame.width, height: frame.height, keyframe: frame.payload)
        // Every frame screenpub codes above layer 0 predicts only from the newest layer-0 frame, and none from it
        // (ScreenCodec's TemporalLayers): a relay may leave out or send each one on its own.
        let offers = offersRenditions ? renditionCodecs.filter { $0 != frame.codec } : []
        try await link.send(.publish(
            name: streamName, properties: properties, acks: acknowledged, discardableLayers: readsLayers, refreshes: true, renditions: offers))
        guard let id = await answers.next() else {
            throw RelayClientError(.closed, "the relay closed the connection before accepting the stream")
        }
        return (id, properties, announced.revision)
    }
}
