public import ScreenMedia
public import ScreenWire

/// The fan-out of one session's streams to its subscribers, as a pure state machine: the server feeds it
/// events (connections, subscriptions, frames, deliveries, clock ticks) and performs the actions it returns.
/// Tested without sockets.
///
/// Guarantees:
/// - A subscriber never holds back the publisher or other subscribers: each has at most
///   ``Limits/maximumQueuedFrames`` frames in flight; past that its frames are dropped, and it waits for the
///   next keyframe (deltas after a gap would not decode), which is requested from the publisher.
/// - Keyframe requests to a publisher are throttled to one per ``Limits/keyframeRequestInterval`` seconds per
///   stream; requests in between are merged into the next allowed one (on ``tick(now:)``).
/// - Audio frames go only to subscribers that asked for them (`subscribe` with `audio`), each with a queue of its
///   own (``Limits/maximumQueuedAudioFrames``): past it they are dropped one by one — there is no keyframe to
///   wait for — and a subscriber waiting for a video keyframe still gets its sound.
/// - A new subscriber starts with the cached group of pictures (the last keyframe and the deltas since), so it
///   shows the current screen at once; if there is no usable cache it waits for a requested keyframe.
///
/// `Frame` is whatever the server forwards (a shared byte buffer); the router never copies it.
public struct StreamRouter<Frame> {
    public struct Limits: Sendable {
        public var maximumQueuedFrames: Int
        /// Audio frames (20 ms each) a subscriber may have in flight before the next ones are dropped.
        public var maximumQueuedAudioFrames: Int
        public var keyframeRequestInterval: Double
        /// The cached group of pictures is dropped past this many bytes (and a keyframe is asked for the next
        /// subscriber instead), which bounds the relay's memory per stream.
        public var maximumCachedBytes: Int
        /// Signals one connection may send per second, on average, and at once: past them a signal is refused
        /// (`invalidSignal`), so that one client cannot flood everyone's queue through the session.
        public var signalsPerSecond: Double
        public var signalBurst: Double
        /// Streams one connection may publish at once, and the longest name (bytes): what every joiner's
        /// welcome carries stays small.
        public var maximumStreamsPerConnection: Int
        public var maximumStreamNameBytes: Int

        public init(
            maximumQueuedFrames: Int = 16, maximumQueuedAudioFrames: Int = 10, keyframeRequestInterval: Double = 0.5, maximumCachedBytes: Int = 8 << 20,
            signalsPerSecond: Double = 20, signalBurst: Double = 40, maximumStreamsPerConnection: Int = 16,
            maximumStreamNameBytes: Int = 256
        ) {
            self.maximumQueuedFrames = maximumQueuedFrames
            self.maximumQueuedAudioFrames = maximumQueuedAudioFrames
            self.keyframeRequestInterval = keyframeRequestInterval
            self.maximumCachedBytes = maximumCachedBytes
            self.signalsPerSecond = signalsPerSecond
            self.signalBurst = signalBurst
            self.maximumStreamsPerConnection = maximumStreamsPerConnection
            self.maximumStreamNameBytes = maximumStreamNameBytes
        }
    }

    public enum Action {
        /// Write a media frame to a subscriber; report ``frameDelivered(to:streamId:)`` when written.
        case sendFrame(Frame, to: String, streamId: UInt32)
        /// Write an audio frame to a subscriber; report ``audioFrameDelivered(to:streamId:)`` when written.
        case sendAudio(Frame, to: String, streamId: UInt32)
        case sendControl(ControlMessage, to: String)
        /// Close a connection after sending it an error.
        case close(String, WireErrorCode, String)
    }

    private struct Subscription {
        var queued = 0
        var waitingForKeyframe = true
        /// It asked for audio frames; how many it has in flight.
        var audio = false
        var queuedAudio = 0
    }

    private struct Stream {
        var info: StreamInfo
        var subscribers: [String: Subscription] = [:]
        /// The last keyframe and the deltas since, in order; nil when unusable (too large, or none yet).
        var cache: [Frame]? = nil
        var cachedBytes = 0
        var lastKeyframeRequest = -Double.infinity
        var keyframeRequestPending = false
        var lastSequence: UInt64?
    }

    public let sessionId: String
    public let limits: Limits
    /// Whether connections with the publisher role may send signals (moderators and subscribers always may).
    public let publishersMaySignal: Bool
    /// Frames not sent to a subscriber because it was too far behind or waiting for a keyframe.
    public private(set) var droppedFrames = 0
    /// Audio frames not sent to a subscriber because it was too far behind.
    public private(set) var droppedAudioFrames = 0
    /// What the router's limits refused, by limit (the relay folds them into its metrics).
    public private(set) var refused: [RelayMetrics.Limit: Int] = [:]

    /// Keyframe requests sent to publishers.
    public private(set) var keyframeRequestsSent = 0
    private var connections: [String: ConnectionInfo] = [:]
    /// Each connection's signal allowance (a token bucket): tokens left, and when it was last filled.
    private var signalAllowance: [String: (tokens: Double, at: Double)] = [:]
    /// Order of joining, so announcements list connections the same way every time.
    private var connectionOrder: [String] = []
    private var streams: [UInt32: Stream] = [:]
    private var nextStreamId: UInt32 = 1

    public init(sessionId: String, limits: Limits = Limits(), publishersMaySignal: Bool = true) {
        self.sessionId = sessionId
        self.limits = limits
        self.publishersMaySignal = publishersMaySignal
    }

    public var isEmpty: Bool { connections.isEmpty }
    public var streamInfos: [StreamInfo] { streams.keys.sorted().compactMap { streams[$0]?.info } }
    /// How many streams are published (without building ``streamInfos``: asked after every frame).
    public var streamCount: Int { streams.count }
    public var connectionInfos: [ConnectionInfo] { connectionOrder.compactMap { connections[$0] } }
    public func streamInfo(_ streamId: UInt32) -> StreamInfo? { streams[streamId]?.info }
    public func subscriberCount(of streamId: UInt32) -> Int { streams[streamId]?.subscribers.count ?? 0 }
    public func queuedFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.queued
    }

    // MARK: Connections

    /// A client said hello with a valid token: welcome it and tell the others.
    public mutating func connect(_ connection: ConnectionInfo) -> [Action] {
        var actions: [Action] = [
            .sendControl(
                .welcome(
                    connectionId: connection.connectionId, sessionId: sessionId, role: connection.role,
                    streams: streamInfos, connections: connectionInfos),
                to: connection.connectionId)
        ]
        for other in connectionOrder {
            actions.append(.sendControl(.connectionCreated(connection), to: other))
        }
        connections[connection.connectionId] = connection
        connectionOrder.append(connection.connectionId)
        return actions
    }

    /// A client left (closed, failed or was closed): its streams end and everyone is told.
    public mutating func disconnect(_ connectionId: String) -> [Action] {
        guard connections.removeValue(forKey: connectionId) != nil else { return [] }
        connectionOrder.removeAll { $0 == connectionId }
        signalAllowance[connectionId] = nil
        var actions: [Action] = []
        for streamId in streams.keys.sorted() {
            if streams[streamId]?.info.connectionId == connectionId {
                actions += endStream(streamId, reason: "disconnected")
            } else {
                streams[streamId]?.subscribers[connectionId] = nil
            }
        }
        for other in connectionOrder {
            actions.append(.sendControl(.connectionDestroyed(connectionId: connectionId), to: other))
        }
        return actions
    }

    // MARK: Control messages

    /// Handles a control message from a connected client.
    public mutating func handle(_ message: ControlMessage, from connectionId: String, now: Double) -> [Action] {
        guard let connection = connections[connectionId] else {
            return [.close(connectionId, .badState, "say hello first")]
        }
        switch message {
        case .publish(let name, let properties):
            guard connection.role.mayPublish else {
                return [.sendControl(.error(code: .forbidden, message: "a \(connection.role.rawValue) token cannot publish"), to: connectionId)]
            }
            guard name.utf8.count <= limits.maximumStreamNameBytes else {
                refused[.streamName, default: 0] += 1
                return [.sendControl(.error(code: .malformed, message: "a stream name is at most \(limits.maximumStreamNameBytes) bytes"), to: connectionId)]
            }
            guard streams.values.count(where: { $0.info.connectionId == connectionId }) < limits.maximumStreamsPerConnection else {
                refused[.streamsPerConnection, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "a connection publishes at most \(limits.maximumStreamsPerConnection) streams at once"), to: connectionId)]
            }
            let info = StreamInfo(streamId: nextStreamId, connectionId: connectionId, name: name, properties: properties)
            nextStreamId &+= 1
            streams[info.streamId] = Stream(info: info)
            var actions: [Action] = [.sendControl(.published(info), to: connectionId)]
            for other in connectionOrder where other != connectionId {
                actions.append(.sendControl(.streamCreated(info), to: other))
            }
            return actions
        case .unpublish(let streamId):
            guard streams[streamId]?.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            return endStream(streamId, reason: "unpublished")
        case .streamPropertyChanged(let streamId, let properties):
            guard var stream = streams[streamId], stream.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            // Kept, so that late joiners see the stream as it is now (paused, say).
            stream.info.properties = properties
            streams[streamId] = stream
            return connectionOrder.map { .sendControl(.streamPropertyChanged(streamId: streamId, properties: properties), to: $0) }
        case .subscribe(let streamId, let audio):
            return subscribe(connectionId, to: streamId, audio: audio, now: now)
        case .unsubscribe(let streamId):
            streams[streamId]?.subscribers[connectionId] = nil
            return []
        case .requestKeyframe(let streamId):
            guard streams[streamId]?.subscribers[connectionId] != nil else {
                return [.sendControl(.error(code: .notFound, message: "not subscribed to stream \(streamId)"), to: connectionId)]
            }
            streams[streamId]?.subscribers[connectionId]?.waitingForKeyframe = true
            return requestKeyframe(streamId, now: now)
        case .signal(var signal):
            if connection.role == .publisher && !publishersMaySignal {
                return [.sendControl(.error(code: .forbidden, message: "this relay does not let publisher tokens send signals"), to: connectionId)]
            }
            guard takeSignalAllowance(connectionId, now: now) else {
                refused[.signalRate, default: 0] += 1
                return [.sendControl(.error(code: .invalidSignal, message: "too many signals: at most \(Int(limits.signalsPerSecond)) a second"), to: connectionId)]
            }
            signal.from = connectionId
            signal.fromData = connection.data
            return deliver(signal, replyingTo: connectionId)
        case .hello:
            return [.sendControl(.error(code: .badState, message: "hello was already accepted"), to: connectionId)]
        case .welcome, .published, .subscribed, .streamCreated, .streamDestroyed, .connectionCreated,
            .connectionDestroyed, .error, .archiveStarted, .archiveStopped:
            return [.close(connectionId, .unknownMessage, "\(message.type) is sent by the relay, not to it")]
        }
    }

    /// Asks every publisher of the session for a keyframe (a recording starts: each of its files must).
    public mutating func requestKeyframesForAllStreams(now: Double) -> [Action] {
        streams.keys.sorted().flatMap { requestKeyframe($0, now: now) }
    }

    /// Asks the publisher of one stream for a keyframe for the relay itself (an HLS segment is due).
    public mutating func requestKeyframe(forStream streamId: UInt32, now: Double) -> [Action] {
        requestKeyframe(streamId, now: now)
    }

    // MARK: Signals

    /// Spends one of the connection's signals, refilled at ``Limits/signalsPerSecond`` up to the burst.
    private mutating func takeSignalAllowance(_ connectionId: String, now: Double) -> Bool {
        var allowance = signalAllowance[connectionId] ?? (limits.signalBurst, now)
        allowance.tokens = min(limits.signalBurst, allowance.tokens + (now - allowance.at) * limits.signalsPerSecond)
        allowance.at = now
        let allowed = allowance.tokens >= 1
        if allowed { allowance.tokens -= 1 }
        signalAllowance[connectionId] = allowance
        return allowed
    }

    /// A signal from the server itself (its HTTP API): to one connection or everyone. Throws `invalidSignal`
    /// or `notFound`.
    public func serverSignal(_ signal: Signal) throws(WireError) -> [Action] {
        var signal = signal
        signal.from = nil
        signal.fromData = nil
        try signal.validate()
        if let to = signal.to, connections[to] == nil { throw WireError(.notFound, "there is no connection \(to)") }
        return recipients(of: signal).map { .sendControl(.signal(signal), to: $0) }
    }

    /// Delivers a client's signal, or answers it (not fatally) with what is wrong.
    private func deliver(_ signal: Signal, replyingTo sender: String) -> [Action] {
        do {
            try signal.validate()
        } catch {
            return [.sendControl(.error(code: error.kind, message: error.message), to: sender)]
        }
        if let to = signal.to, connections[to] == nil {
            return [.sendControl(.error(code: .notFound, message: "there is no connection \(to) to signal"), to: sender)]
        }
        return recipients(of: signal).map { .sendControl(.signal(signal), to: $0) }
    }

    /// One connection, or every connection of the session (the sender included, so that a chat shows one's own
    /// lines in the order the relay saw them).
    private func recipients(of signal: Signal) -> [String] {
        signal.to.map { [$0] } ?? connectionOrder
    }

    private mutating func subscribe(_ connectionId: String, to streamId: UInt32, audio: Bool, now: Double) -> [Action] {
        guard var stream = streams[streamId] else {
            return [.sendControl(.error(code: .notFound, message: "there is no stream \(streamId)"), to: connectionId)]
        }
        // Already subscribed: nothing to do. Replaying the cached pictures would let one connection make
        // the relay queue them again and again, past the per-subscriber bound.
        guard stream.subscribers[connectionId] == nil else { return [] }
        var actions: [Action] = [.sendControl(.subscribed(streamId: streamId), to: connectionId)]
        var subscription = Subscription(audio: audio)
        if let cache = stream.cache, cache.count <= limits.maximumQueuedFrames {
            // Catch up with the current picture right away.
            for frame in cache { actions.append(.sendFrame(frame, to: connectionId, streamId: streamId)) }
            subscription.queued = cache.count
            subscription.waitingForKeyframe = false
            stream.subscribers[connectionId] = subscription
            streams[streamId] = stream
        } else {
            stream.subscribers[connectionId] = subscription
            streams[streamId] = stream
            actions += requestKeyframe(streamId, now: now)
        }
        return actions
    }

    private mutating func endStream(_ streamId: UInt32, reason: String) -> [Action] {
        guard streams.removeValue(forKey: streamId) != nil else { return [] }
        return connectionOrder.map { .sendControl(.streamDestroyed(streamId: streamId, reason: reason), to: $0) }
    }

    // MARK: Media

    /// A media frame arrived from `connectionId`. `size` is its length in bytes (for the cache bound).
    public mutating func frame(
        _ frame: Frame, header: MediaFrameHeader, size: Int, from connectionId: String, now: Double
    ) -> [Action] {
        guard var stream = streams[header.streamID], stream.info.connectionId == connectionId else {
            return [.close(connectionId, .notFound, "stream \(header.streamID) is not yours: publish it first")]
        }
        stream.lastSequence = header.sequence
        if header.isKeyframe {
            stream.cache = [frame]
            stream.cachedBytes = size
            stream.keyframeRequestPending = false
        } else if stream.cache != nil {
            stream.cachedBytes += size
            if stream.cachedBytes > limits.maximumCachedBytes || stream.cache!.count >= 4 * limits.maximumQueuedFrames {
                stream.cache = nil
                stream.cachedBytes = 0
            } else {
                stream.cache!.append(frame)
            }
        }
        var actions: [Action] = []
        var needsKeyframe = false
        for (subscriberId, var subscription) in stream.subscribers {
            if subscription.waitingForKeyframe && !header.isKeyframe {
                needsKeyframe = true
                droppedFrames += 1
                continue
            }
            if subscription.queued >= limits.maximumQueuedFrames {
                // Too far behind: stop sending to it until a keyframe lets it start over.
                subscription.waitingForKeyframe = true
                stream.subscribers[subscriberId] = subscription
                needsKeyframe = true
                droppedFrames += 1
                continue
            }
            subscription.waitingForKeyframe = false
            subscription.queued += 1
            stream.subscribers[subscriberId] = subscription
            actions.append(.sendFrame(frame, to: subscriberId, streamId: header.streamID))
        }
        streams[header.streamID] = stream
        if needsKeyframe { actions += requestKeyframe(header.streamID, now: now) }
        return actions
    }

    /// An audio frame arrived from `connectionId`: to every subscriber that asked for audio and is not too far
    /// behind. Never cached: a late joiner's sound starts with the next frame.
    public mutating func audioFrame(_ frame: Frame, header: AudioFrameHeader, from connectionId: String) -> [Action] {
        guard var stream = streams[header.streamID], stream.info.connectionId == connectionId else {
            return [.close(connectionId, .notFound, "stream \(header.streamID) is not yours: publish it first")]
        }
        var actions: [Action] = []
        for (subscriberId, var subscription) in stream.subscribers where subscription.audio {
            guard subscription.queuedAudio < limits.maximumQueuedAudioFrames else {
                droppedAudioFrames += 1
                continue
            }
            subscription.queuedAudio += 1
            stream.subscribers[subscriberId] = subscription
            actions.append(.sendAudio(frame, to: subscriberId, streamId: header.streamID))
        }
        streams[header.streamID] = stream
        return actions
    }

    /// An audio frame sent to a subscriber was written out.
    public mutating func audioFrameDelivered(to connectionId: String, streamId: UInt32) {
        guard let queued = streams[streamId]?.subscribers[connectionId]?.queuedAudio, queued > 0 else { return }
        streams[streamId]?.subscribers[connectionId]?.queuedAudio = queued - 1
    }

    public func queuedAudioFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.queuedAudio
    }

    /// A frame sent to a subscriber was written out.
    public mutating func frameDelivered(to connectionId: String, streamId: UInt32) {
        guard let queued = streams[streamId]?.subscribers[connectionId]?.queued, queued > 0 else { return }
        streams[streamId]?.subscribers[connectionId]?.queued = queued - 1
    }

    /// Sends keyframe requests that were held back by the throttle. Call periodically (every ~100 ms).
    public mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        for streamId in streams.keys.sorted() where streams[streamId]?.keyframeRequestPending == true {
            actions += requestKeyframe(streamId, now: now)
        }
        return actions
    }

    private mutating func requestKeyframe(_ streamId: UInt32, now: Double) -> [Action] {
        guard var stream = streams[streamId] else { return [] }
        defer { streams[streamId] = stream }
        if now - stream.lastKeyframeRequest < limits.keyframeRequestInterval {
            stream.keyframeRequestPending = true
            return []
        }
        stream.lastKeyframeRequest = now
        stream.keyframeRequestPending = false
        keyframeRequestsSent += 1
        return [.sendControl(.requestKeyframe(streamId: streamId), to: stream.info.connectionId)]
    }
}
