import Foundation
public import ScreenMedia
public import ScreenWire

/// The fan-out of one session's streams to its subscribers, as a pure state machine: the server feeds it
/// events (connections, subscriptions, frames, deliveries, clock ticks) and performs the actions it returns.
/// Tested without sockets.
///
/// Guarantees:
/// - A subscriber never holds back the publisher or other subscribers. Each subscription measures how fast its
///   connection drains (bytes written over the time they took) and what it has queued, in milliseconds at that
///   rate. Past ``Limits/thinAboveMilliseconds`` its highest temporal layer is lowered (frames of higher layers
///   are not sent: a lower frame rate that still decodes); once it has stayed under
///   ``Limits/raiseBelowMilliseconds`` for ``Limits/raiseAfterSeconds`` the layer goes up again, at the next
///   layer-0 frame. Only when a layer-0 frame does not fit (past ``Limits/maximumQueuedMilliseconds`` or
///   ``Limits/maximumQueuedBytes``) does the subscriber skip to the next keyframe.
/// - A link between two layers gets what fits of the one above: when the publisher says its frames above layer 0
///   are discardable one by one (`publish` with `discardableLayers`), such a frame above a subscriber's layers
///   still goes to it when its link would carry it within ``Limits/fitInMilliseconds`` and before the next
///   layer-0 frame is due (``fits(_:_:queued:stream:now:)``), so that a subscriber thinned to layer 0 does not
///   wait a whole layer-0 interval between pictures while its link stands idle. One that does not fit when it
///   comes is held (the newest only) until the link has room for it in time.
/// - A thinned subscriber's socket is paced a little over its link (``pacingRate(for:)``), so that its frames do
///   not overflow a thin link's bottleneck queue and go twice.
/// - A skipped subscriber is restarted once it has drained: from the cached pictures of its layers when they
///   cost it less than twice a keyframe, else with a keyframe requested from the publisher — at most once every
///   ``Limits/subscriberKeyframeIntervalSeconds`` per subscriber, and at most once every
///   ``Limits/keyframeRequestInterval`` per stream (requests in between are merged into the next allowed one,
///   on ``tick(now:)``). Other subscribers never wait for it.
/// - A subscriber that takes nothing of what is queued for it for ``Limits/stallSeconds`` is evicted (it stopped
///   reading, whether or not it still answers pings).
/// - Publishers that asked for acknowledgements (`publish` with `acks`) get an `ack` for each video frame as it
///   arrives: what their rate controller measures the uplink with.
/// - Audio frames go only to subscribers that asked for them (`subscribe` with `audio`), each with a queue of its
///   own (``Limits/maximumQueuedAudioFrames``): past it they are dropped one by one — there is no keyframe to
///   wait for — and a subscriber waiting for a video keyframe still gets its sound.
/// - A new subscriber starts with the cached group of pictures (the last keyframe and the deltas since), so it
///   shows the current screen at once; if there is no usable cache it waits for a requested keyframe.
///
/// `Frame` is whatever the server forwards (a shared byte buffer); the router never copies it.
public struct StreamRouter<Frame> {
    /// One video frame on its way to a subscriber.
    private struct InFlight {
        var bytes: Int
        var queuedAt: Double
        /// Above the subscriber's layers, sent because its link had room (``fits(_:_:queued:stream:now:)``).
        var fittedIn = false
    }

    private struct Subscription {
        var waitingForKeyframe = true
        /// It reads layer ids and `subscriptionChanged` (protocol 3).
        var readsLayers = false
        /// It reads the catch-up flag (protocol 5): cached pictures go to it flagged, decoded and not shown.
        var readsCatchUp = false
        /// The arrival number of the last video frame sent to it: a frame it is sent to be shown is newer.
        var lastSent: UInt64?
        /// Frames of higher layers are not sent to it.
        var highestLayer = MediaFrameHeader.Flags.highestLayer
        /// Set once it has been calm long enough: the layer goes up at the next layer-0 frame.
        var raisePending = false
        var lastLayerChange = -Double.infinity
        /// A layer may also come back without the drain rate showing room for it (a probe: the rate is measured
        /// only while frames queue) after this much calm; doubled each time a probe is undone soon, to a minute.
        var probeAfterSeconds: Double
        /// When the last raise was a probe (nil: it was not).
        var probedAt: Double?
        /// Since when its queue has stayed under ``Limits/raiseBelowMilliseconds``.
        var calmSince: Double
        var inFlight = FIFO<InFlight>()
        var queuedBytes = 0
        /// Of ``queuedBytes``, those of frames fitted in above its layers.
        var fittedInBytes = 0
        /// Its drain rate: bytes and busy seconds, both decaying, so that their ratio follows the link.
        var drainedBytes = 0.0
        var drainSeconds = 0.0
        var lastDeliveryAt: Double
        /// Since when it has taken nothing of a non-empty queue.
        var stalledSince: Double?
        /// It skipped to the next keyframe and wants to be restarted once it has drained.
        var needsRestart = false
        var lastKeyframeRequest = -Double.infinity
        /// Its own keyframe requests and their allowance.
        var requests: SubscriberKeyframeRequests
        /// What it was last told (`subscriptionChanged`).
        var announced: (layer: Int, waiting: Bool)?
        /// The newest discardable frame above its layers that its link had no room for when it came: sent once
        /// the link has room in time (``releaseHeld(_:streamId:now:)``), dropped when a newer frame goes to it.
        /// Every holder of a stream holds the same frame, its newest, so this costs a stream one frame at most.
        var held: (frame: Frame, bytes: Int, arrival: UInt64)?
        /// It asked for audio frames; how many it has in flight.
        var audio = false
        var queuedAudio = 0

        init(now: Double, probeAfterSeconds: Double, requests: SubscriberKeyframeRequests) {
            self.requests = requests
            calmSince = now
            lastDeliveryAt = now
            self.probeAfterSeconds = probeAfterSeconds
        }

        /// What the kernel says of its connection (``linkMeasured(_:deliveryBytesPerSecond:pendingBytes:now:)``):
        /// its delivery rate, smoothed, and the bytes it holds below the relay's queue.
        var kernelRate: Double?
        /// The lowest of the kernel's recent measures, climbing 2 % a sample: what a layer's return is judged by.
        /// Single measures run high on a link whose queue lets bursts through at the line's rate (a token bucket),
        /// and a layer that only the high ones would carry fills the queue for seconds before it goes again.
        var kernelRateLow: Double?
        var hiddenBytes = 0
        /// How fast its link carries what it is sent from an idle start.
        var idleStart = IdleStartTiming()
        /// Its link is timed closely (sampled every tick rather than every half second): it is thinned, and its
        /// busy periods and held frames decide what more it gets.
        func watchedClosely(topLayer: Int) -> Bool { held != nil || idleStart.isTiming && highestLayer < topLayer }

        /// Bytes per second it has been taking them at: the kernel's measure when there is one, else the gaps
        /// between deliveries; nil before either can tell.
        var drainRate: Double? {
            kernelRate ?? (drainSeconds > 0.02 && drainedBytes > 4096 ? drainedBytes / drainSeconds : nil)
        }

        /// How long what is queued for it will take, in milliseconds: its bytes at the drain rate, less what the
        /// link has done of the first since it began on it, plus however much longer than expected that has
        /// taken (a link that stopped). Before the rate is known, how long the first has waited.
        func queuedMilliseconds(now: Double) -> Double {
            let below = drainRate.map { Double(hiddenBytes) / $0 * 1000 } ?? 0
            guard let head = inFlight.first else { return below }
            let onHead = now - max(head.queuedAt, lastDeliveryAt)
            guard let rate = drainRate else { return (now - head.queuedAt) * 1000 }
            let remaining = max(0, Double(queuedBytes) / rate - onHead)
            let overrun = max(0, onHead - Double(head.bytes) / rate)
            return (remaining + overrun) * 1000 + below
        }

        /// ``queuedMilliseconds(now:)`` less the frames fitted in above its layers: what its layers are judged by
        /// (those frames only go where there is room, and must not take its layers' place).
        func layersMilliseconds(queued: Double) -> Double {
            guard fittedInBytes > 0, let rate = drainRate else { return queued }
            return max(0, queued - Double(fittedInBytes) / rate * 1000)
        }
    }

    private struct Stream {
        var info: StreamInfo
        var subscribers: [String: Subscription] = [:]
        /// The last keyframe and the deltas since, in order, with their layers and sizes; nil when unusable (too
        /// large, or none yet).
        var cache: [(frame: Frame, layer: Int, bytes: Int, arrival: UInt64)]? = nil
        var cachedBytes = 0
        /// Video frames admitted so far: each frame's arrival number (the publisher's sequence numbers are its own).
        var arrivals: UInt64 = 0
        var lastKeyframeRequest = -Double.infinity
        var keyframeRequestPending: KeyframeCause?
        /// When its last keyframe came, and when a keyframe was last asked on subscribers' behalf: what
        /// ``Limits/subscriberKeyframeCeilingSeconds`` counts from.
        var lastKeyframeAt = -Double.infinity
        var lastSubscriberKeyframeRequest = -Double.infinity
        /// Its frames' capture times so far: a frame out of order or far ahead is refused.
        var timeline = CaptureTimeline()
        /// The last frame was refused (the publisher is told once, not for every refused frame in a row).
        var refusing = false
        /// Its frame rates' allowances (``Limits/maximumFramesPerSecond``); made at its first frame.
        var videoAllowance: TokenBucket?
        var audioAllowance: TokenBucket?
        /// The publisher asked for acknowledgements.
        var acknowledges = false
        /// The publisher's frames above layer 0 are discardable one by one (`publish` with `discardableLayers`).
        var discardableLayers = false
        /// The smoothed gap between its frames, when its last layer-0 frame came and the smoothed gap between
        /// those: when the next layer-0 frame is due (``layerZeroDue(after:)``).
        var frameInterval: Double?
        var lastLayerZeroAt: Double?
        var layerZeroInterval: Double?
        /// The highest temporal layer its frames have carried: how far a subscriber's layer can go up.
        var topLayer = 0
        /// Each layer's bytes, decaying with a time constant of ``layerRateSeconds``: its rate, to tell whether a
        /// subscriber's link would carry one more layer.
        var layerBytes = [Double](repeating: 0, count: MediaFrameHeader.Flags.highestLayer + 1)
        /// When the last video frame came.
        var layerBytesAt: Double?

        static var layerRateSeconds: Double { 5 }

        /// Notes a video frame's arrival: its bytes in its layer's rate, and the gaps for ``layerZeroDue(after:)``.
        mutating func count(_ bytes: Int, layer: Int, now: Double) {
            func smoothed(_ old: Double?, _ gap: Double) -> Double { old.map { 0.75 * $0 + 0.25 * gap } ?? gap }
            if let last = layerBytesAt { frameInterval = smoothed(frameInterval, now - last) }
            if layer == 0 {
                if let last = lastLayerZeroAt { layerZeroInterval = smoothed(layerZeroInterval, now - last) }
                lastLayerZeroAt = now
            }
            let elapsed = layerBytesAt.map { max(0, now - $0) } ?? 0
            let keep = exp(-elapsed / Self.layerRateSeconds)
            for index in layerBytes.indices { layerBytes[index] *= keep }
            layerBytes[layer] += Double(bytes)
            layerBytesAt = now
        }

        /// Bytes per second of layers 0…`layer`.
        func rate(upTo layer: Int) -> Double {
            layerBytes.prefix(layer + 1).reduce(0, +) / Self.layerRateSeconds
        }

        /// When the next layer-0 frame is expected: a layer-0 interval after the last one, or, once that has
        /// passed, with the next frame — a frame interval after the last frame, or from now once the stream has
        /// paused for longer than that (nil before the stream has shown its pace).
        func layerZeroDue(after now: Double) -> Double? {
            guard let last = lastLayerZeroAt, let interval = layerZeroInterval else { return nil }
            if last + interval > now { return last + interval }
            guard let frameInterval, let lastFrame = layerBytesAt else { return nil }
            let next = lastFrame + frameInterval
            return next > now - frameInterval ? max(now, next) : now + frameInterval
        }
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

    /// Keyframe requests sent to publishers, and why.
    public private(set) var keyframeRequestsSent = 0
    public private(set) var keyframeRequestsByCause: [KeyframeCause: Int] = [:]
    /// Video frames not sent to a subscriber because its link could not carry their layer (it still got the
    /// lower layers).
    public private(set) var thinnedFrames = 0
    /// Video frames above a subscriber's layers sent to it all the same, because its link had room for them.
    public private(set) var fittedInFrames = 0
    /// Subscribers closed because they took nothing of their queue for ``Limits/stallSeconds``.
    public private(set) var evictedSubscribers = 0
    /// Subscribers brought to the newest picture from the cache: by the frames they missed, or from its keyframe.
    public private(set) var catchUpsContinued = 0
    public private(set) var catchUpsFromKeyframe = 0
    private var connections: [String: ConnectionInfo] = [:]
    /// Each connection's signal allowance (a token bucket): tokens left, and when it was last filled.
    private var signalAllowance: [String: TokenBucket] = [:]
    /// The whole session's signals (every connection's together): each goes to everyone, so what one token's
    /// many connections could make the relay deliver is bounded by it, not by their number.
    private var sessionSignalAllowance: TokenBucket
    /// Each token's share of the session: its connections, streams, signals and frames together.
    private var shares: TokenShares
    /// Order of joining, so announcements list connections the same way every time.
    private var connectionOrder: [String] = []
    private var streams: [UInt32: Stream] = [:]
    private var nextStreamId: UInt32 = 1

    /// The most frames the cached group of pictures holds (SRS keeps up to 2500): past it, or past
    /// ``Limits/maximumCachedBytes``, it is dropped until the next keyframe.
    static var maximumCachedFrames: Int { 2500 }

    public init(sessionId: String, limits: Limits = Limits(), publishersMaySignal: Bool = true) {
        self.sessionId = sessionId
        self.limits = limits
        self.publishersMaySignal = publishersMaySignal
        sessionSignalAllowance = TokenBucket(rate: limits.sessionSignalsPerSecond, burst: 2 * limits.sessionSignalsPerSecond)
        shares = TokenShares(limits: limits.tokenShares)
    }

    public var isEmpty: Bool { connections.isEmpty }
    public var streamInfos: [StreamInfo] { streams.keys.sorted().compactMap { streams[$0]?.info } }
    /// How many streams are published (without building ``streamInfos``: asked after every frame).
    public var streamCount: Int { streams.count }
    public var connectionInfos: [ConnectionInfo] { connectionOrder.compactMap { connections[$0] } }
    public func streamInfo(_ streamId: UInt32) -> StreamInfo? { streams[streamId]?.info }
    public func subscriberCount(of streamId: UInt32) -> Int { streams[streamId]?.subscribers.count ?? 0 }
    public func queuedFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.inFlight.count
    }

    /// The highest temporal layer a subscriber gets now (nil: not subscribed).
    public func highestLayer(for connectionId: String, streamId: UInt32) -> Int? {
        guard let stream = streams[streamId], let subscription = stream.subscribers[connectionId] else { return nil }
        return min(subscription.highestLayer, stream.topLayer)
    }

    /// How many subscribers of all streams get each highest layer, and how many wait for a keyframe (`nil`).
    public var subscribersByLayer: [Int?: Int] {
        var counts: [Int?: Int] = [:]
        for stream in streams.values {
            for subscription in stream.subscribers.values {
                counts[subscription.waitingForKeyframe ? nil : min(subscription.highestLayer, stream.topLayer), default: 0] += 1
            }
        }
        return counts
    }

    // MARK: Connections

    /// A client said hello with a valid token (`token`: its id; nil, a token of its own): welcome it and tell the
    /// others, or close it when its token or the session holds all the connections they may.
    public mutating func connect(_ connection: ConnectionInfo, token: String? = nil) -> [Action] {
        if let refusal = shares.join(connection.connectionId, token: token ?? connection.connectionId, role: connection.role) {
            switch refusal {
            case .connectionsPerToken: refused[.connectionsPerToken, default: 0] += 1
            case .connectionsPerSession: refused[.connectionsPerSession, default: 0] += 1
            }
            return [.close(connection.connectionId, .forbidden, refusal.sentence)]
        }
        var actions: [Action] = [
            .sendControl(
                .welcome(
                    connectionId: connection.connectionId, sessionId: sessionId, role: connection.role,
                    streams: streamInfos, connections: welcomeConnections),
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
        shares.leave(connectionId)
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
        case .publish(let name, let properties, let acks, let discardableLayers):
            guard connection.role.mayPublish else {
                return [.sendControl(.error(code: .forbidden, message: "a \(connection.role.rawValue) token cannot publish"), to: connectionId)]
            }
            guard name.utf8.count <= limits.maximumStreamNameBytes else {
                refused[.streamName, default: 0] += 1
                return [.sendControl(.error(code: .malformed, message: "a stream name is at most \(limits.maximumStreamNameBytes) bytes"), to: connectionId)]
            }
            guard streams.count < limits.maximumStreamsPerSession else {
                refused[.streamsPerSession, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "this session holds \(limits.maximumStreamsPerSession) streams, the most it may: unpublish one first"), to: connectionId)]
            }
            guard streams.values.count(where: { $0.info.connectionId == connectionId }) < limits.maximumStreamsPerConnection else {
                refused[.streamsPerConnection, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "a connection publishes at most \(limits.maximumStreamsPerConnection) streams at once"), to: connectionId)]
            }
            let token = shares.token(of: connectionId)
            guard streams.values.count(where: { shares.token(of: $0.info.connectionId) == token }) < limits.tokenShares.streamsPerToken else {
                refused[.streamsPerToken, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "this token's connections publish \(limits.tokenShares.streamsPerToken) streams, the most they may together: unpublish one first"), to: connectionId)]
            }
            let info = StreamInfo(streamId: nextStreamId, connectionId: connectionId, name: name, properties: properties)
            nextStreamId &+= 1
            streams[info.streamId] = Stream(info: info, acknowledges: acks, discardableLayers: discardableLayers)
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
        case .subscribe(let streamId, let audio, let layers, let catchUp):
            return subscribe(connectionId, to: streamId, audio: audio, layers: layers, catchUp: catchUp, now: now)
        case .unsubscribe(let streamId):
            streams[streamId]?.subscribers[connectionId] = nil
            return []
        case .requestKeyframe(let streamId):
            guard let decision = streams[streamId]?.subscribers[connectionId]?.requests.asked(now: now) else {
                return [.sendControl(.error(code: .notFound, message: "not subscribed to stream \(streamId)"), to: connectionId)]
            }
            switch decision {
            case .serve:
                return serveKeyframeRequest(connectionId, streamId: streamId, now: now)
            case .wait:
                refused[.keyframeRequests, default: 0] += 1
                return []
            case .close:
                refused[.keyframeRequests, default: 0] += 1
                return [.close(
                    connectionId, .rateLimited,
                    "it asked for keyframes \(limits.ignoredKeyframeRequestsBeforeClose) times over its allowance of \(limits.keyframeRequestsPerSubscriber) per \(Int(limits.keyframeRequestWindowSeconds)) s")]
            }
        case .signal(var signal):
            if connection.role == .publisher && !publishersMaySignal {
                return [.sendControl(.error(code: .forbidden, message: "this relay does not let publisher tokens send signals"), to: connectionId)]
            }
            guard takeSignalAllowance(connectionId, now: now) else {
                refused[.signalRate, default: 0] += 1
                return [.sendControl(.error(code: .invalidSignal, message: "too many signals: at most \(Int(limits.signalsPerSecond)) a second"), to: connectionId)]
            }
            guard shares.takeSignal(connectionId, now: now) else {
                refused[.signalRate, default: 0] += 1
                return [.sendControl(.error(code: .invalidSignal, message: "too many signals from this token: at most \(Int(limits.tokenShares.signalsPerSecond)) a second from all its connections together"), to: connectionId)]
            }
            guard sessionSignalAllowance.take(now: now) else {
                refused[.signalRate, default: 0] += 1
                return [.sendControl(.error(code: .invalidSignal, message: "too many signals in this session: at most \(Int(limits.sessionSignalsPerSecond)) a second from everyone together"), to: connectionId)]
            }
            signal.from = connectionId
            signal.fromData = connection.data
            return deliver(signal, replyingTo: connectionId)
        case .uplink(let streamId, _, _):
            // What the relay's metrics show (the session hub keeps it); only the stream's publisher may say it.
            guard streams[streamId]?.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            return []
        case .hello:
            return [.sendControl(.error(code: .badState, message: "hello was already accepted"), to: connectionId)]
        case .welcome, .published, .subscribed, .streamCreated, .streamDestroyed, .connectionCreated,
            .connectionDestroyed, .error, .archiveStarted, .archiveStopped, .ack, .subscriptionChanged:
            return [.close(connectionId, .unknownMessage, "\(message.type) is sent by the relay, not to it")]
        }
    }

    /// A recording starts: each stream's file must begin at a keyframe. Returns the cached pictures of each stream
    /// that has them (its last keyframe and the frames since, for the file to begin with), and asks the publishers
    /// of the others for a keyframe: starting a recording costs the viewers no keyframe when the cache can start it.
    public mutating func startingRecording(now: Double) -> (cached: [(streamId: UInt32, frames: [Frame])], actions: [Action]) {
        var cached: [(streamId: UInt32, frames: [Frame])] = []
        var actions: [Action] = []
        for streamId in streams.keys.sorted() {
            if let cache = streams[streamId]?.cache, !cache.isEmpty {
                cached.append((streamId, cache.map(\.frame)))
            } else {
                actions += requestKeyframe(streamId, now: now, cause: .relay)
            }
        }
        return (cached, actions)
    }

    /// Asks the publisher of one stream for a keyframe for the relay itself (an HLS segment is due).
    public mutating func requestKeyframe(forStream streamId: UInt32, now: Double) -> [Action] {
        requestKeyframe(streamId, now: now, cause: .relay)
    }

    // MARK: Signals

    /// Spends one of the connection's signals, refilled at ``Limits/signalsPerSecond`` up to the burst.
    private mutating func takeSignalAllowance(_ connectionId: String, now: Double) -> Bool {
        var allowance = signalAllowance[connectionId] ?? TokenBucket(rate: limits.signalsPerSecond, burst: limits.signalBurst)
        defer { signalAllowance[connectionId] = allowance }
        return allowance.take(now: now)
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

    private mutating func subscribe(_ connectionId: String, to streamId: UInt32, audio: Bool, layers: Bool, catchUp: Bool, now: Double) -> [Action] {
        guard var stream = streams[streamId] else {
            return [.sendControl(.error(code: .notFound, message: "there is no stream \(streamId)"), to: connectionId)]
        }
        // Already subscribed: nothing to do. Replaying the cached pictures would let one connection make
        // the relay queue them again and again, past the per-subscriber bound.
        guard stream.subscribers[connectionId] == nil else { return [] }
        var actions: [Action] = [.sendControl(.subscribed(streamId: streamId), to: connectionId)]
        var subscription = Subscription(
            now: now, probeAfterSeconds: 3 * limits.raiseAfterSeconds,
            requests: SubscriberKeyframeRequests(
                requests: limits.keyframeRequestsPerSubscriber, perSeconds: limits.keyframeRequestWindowSeconds,
                closeAfter: limits.ignoredKeyframeRequestsBeforeClose))
        subscription.audio = audio
        subscription.readsLayers = layers
        subscription.readsCatchUp = catchUp
        if let cache = stream.cache, let keyframe = cache.first,
            case let long = stream.cachedBytes > 4 * keyframe.bytes,
            (long ? cache.reduce(0) { $0 + ($1.layer == 0 ? $1.bytes : 0) } : stream.cachedBytes) <= limits.maximumQueuedBytes
        {
            // Catch up with the current picture right away. A long group of pictures goes as its layer-0 frames
            // only (nobody knows yet what this subscriber's link carries): layers come up once it has shown that.
            if long { subscription.highestLayer = 0 }
            let frames = cache.filter { !long || $0.layer == 0 }
            for (index, cached) in frames.enumerated() {
                actions.append(send(
                    cached.frame, bytes: cached.bytes, to: connectionId, &subscription, streamId: streamId, now: now, arrival: cached.arrival,
                    clears: cached.layer != 0, catchUp: index < frames.count - 1))
            }
            subscription.waitingForKeyframe = false
            stream.subscribers[connectionId] = subscription
            streams[streamId] = stream
        } else {
            stream.subscribers[connectionId] = subscription
            streams[streamId] = stream
            actions += requestKeyframe(streamId, now: now, cause: .newSubscriber)
        }
        return actions
    }

    private mutating func endStream(_ streamId: UInt32, reason: String) -> [Action] {
        guard streams.removeValue(forKey: streamId) != nil else { return [] }
        return connectionOrder.map { .sendControl(.streamDestroyed(streamId: streamId, reason: reason), to: $0) }
    }

    // MARK: Media

    /// A media frame arrived from `connectionId`. `size` is its length in bytes (for the bounds).
    public mutating func frame(
        _ frame: Frame, header: MediaFrameHeader, size: Int, from connectionId: String, now: Double
    ) -> [Action] {
        receive(frame, header: header, size: size, from: connectionId, now: now).actions
    }

    /// ``frame(_:header:size:from:now:)``, saying also whether the frame was admitted to the stream (what is not
    /// goes to no subscriber, recording or HLS stream): its capture time must fit the stream's timeline
    /// (``CaptureTimeline``).
    public mutating func receive(
        _ frame: Frame, header: MediaFrameHeader, size: Int, from connectionId: String, now: Double
    ) -> (admitted: Bool, actions: [Action]) {
        guard var stream = streams[header.streamID], stream.info.connectionId == connectionId else {
            return (false, [.close(connectionId, .notFound, "stream \(header.streamID) is not yours: publish it first")])
        }
        var actions: [Action] = []
        if stream.acknowledges {
            // It arrived, whatever becomes of it: the publisher measures its uplink by these.
            actions.append(.sendControl(
                .ack(streamId: header.streamID, sequence: header.sequence, receivedAt: (now * 1_000_000).rounded() / 1000), to: connectionId))
        }
        if header.flags.isCatchUp {
            // The relay's own mark for what it sends from its cache: a publisher's frame with it is not live.
            return (false, [.close(connectionId, .malformed, "the catch-up flag is the relay's to set, not a publisher's")])
        }
        if let refusal = admit(header.captureTime, kind: .video, to: &stream, now: now) {
            streams[header.streamID] = stream
            return (false, actions + refusal)
        }
        let layer = header.temporalLayer
        stream.arrivals &+= 1
        let arrival = stream.arrivals
        stream.topLayer = max(stream.topLayer, layer)
        stream.count(size, layer: layer, now: now)
        if header.isKeyframe {
            stream.cache = [(frame, layer, size, arrival)]
            stream.cachedBytes = size
            stream.keyframeRequestPending = nil
            stream.lastKeyframeAt = now
        } else if var cache = stream.cache {
            stream.cache = nil
            stream.cachedBytes += size
            if stream.cachedBytes > limits.maximumCachedBytes || cache.count >= Self.maximumCachedFrames {
                stream.cachedBytes = 0
            } else {
                cache.append((frame, layer, size, arrival))
                stream.cache = cache
            }
        }
        let clears = layer != 0
        var skipped = false
        for (subscriberId, var subscription) in stream.subscribers {
            defer { stream.subscribers[subscriberId] = subscription }
            if subscription.waitingForKeyframe && !header.isKeyframe {
                droppedFrames += 1
                continue
            }
            let queued = subscription.queuedMilliseconds(now: now)
            let layersQueued = subscription.layersMilliseconds(queued: queued)
            noteCalm(&subscription, queued: layersQueued, now: now, stream: stream)
            if header.isKeyframe {
                // A keyframe starts everyone over: sent whenever what is queued leaves room for it.
                guard queued <= limits.maximumQueuedMilliseconds, subscription.queuedBytes + size <= limits.maximumQueuedBytes else {
                    droppedFrames += 1
                    dropHeld(&subscription)
                    skip(&subscription)
                    skipped = true
                    continue
                }
                subscription.waitingForKeyframe = false
                subscription.needsRestart = false
                subscription.requests.satisfied()
            } else {
                if layer == 0, subscription.raisePending {
                    // Going up only at a layer-0 frame: the higher layers' next frames reference it, not what was thinned.
                    subscription.raisePending = false
                    subscription.highestLayer = min(stream.topLayer, subscription.highestLayer + 1)
                    subscription.lastLayerChange = now
                }
                if layersQueued > limits.thinAboveMilliseconds, subscription.highestLayer > 0, layer > 0,
                    now - subscription.lastLayerChange >= limits.thinStepSeconds
                {
                    subscription.highestLayer = min(subscription.highestLayer, stream.topLayer) - 1
                    subscription.lastLayerChange = now
                    subscription.raisePending = false
                    noteProbeUndone(&subscription, now: now)
                }
                if layer > subscription.highestLayer {
                    if stream.discardableLayers {
                        // Sent now if its link has room, else held until it has (newer frames take its place).
                        dropHeld(&subscription)
                        if fits(size, subscription, queued: queued, stream: stream, now: now) {
                            fittedInFrames += 1
                            actions.append(send(frame, bytes: size, to: subscriberId, &subscription, streamId: header.streamID, now: now, arrival: arrival, fittedIn: true))
                        } else {
                            subscription.held = (frame, size, arrival)
                            actions += announce(subscriberId, &subscription, streamId: header.streamID, topLayer: stream.topLayer)
                        }
                        continue
                    }
                    thinnedFrames += 1
                    actions += announce(subscriberId, &subscription, streamId: header.streamID, topLayer: stream.topLayer)
                    continue
                }
                if queued > limits.maximumQueuedMilliseconds || subscription.queuedBytes + size > limits.maximumQueuedBytes {
                    if layer > 0 {
                        // Later frames of this layer may reference this one: the layer goes until it is raised again.
                        subscription.highestLayer = layer - 1
                        subscription.lastLayerChange = now
                        noteProbeUndone(&subscription, now: now)
                        thinnedFrames += 1
                    } else {
                        droppedFrames += 1
                        dropHeld(&subscription)
                        skip(&subscription)
                        skipped = true
                    }
                    actions += announce(subscriberId, &subscription, streamId: header.streamID, topLayer: stream.topLayer)
                    continue
                }
            }
            dropHeld(&subscription)
            actions.append(send(frame, bytes: size, to: subscriberId, &subscription, streamId: header.streamID, now: now, arrival: arrival, clears: clears))
            actions += announce(subscriberId, &subscription, streamId: header.streamID, topLayer: stream.topLayer)
        }
        streams[header.streamID] = stream
        if skipped {
            // Those with an empty queue (they took the frame before) restart at once.
            for subscriberId in stream.subscribers.keys.sorted() { actions += restart(subscriberId, streamId: header.streamID, now: now, cause: .subscriberBehind) }
        }
        return (true, actions)
    }

    /// Nil when the capture time fits the stream's timeline; else the frame is refused, counted, and the
    /// publisher told why — once for a run of refused frames, so that a flood of them is not answered in kind.
    private mutating func admit(_ time: MediaTime, kind: CaptureTimeline.Kind, to stream: inout Stream, now: Double) -> [Action]? {
        let rate = kind == .video ? limits.maximumFramesPerSecond : limits.maximumAudioFramesPerSecond
        var allowance = (kind == .video ? stream.videoAllowance : stream.audioAllowance) ?? TokenBucket(rate: rate, burst: 2 * rate)
        let withinRate = allowance.take(now: now)
        if kind == .video { stream.videoAllowance = allowance } else { stream.audioAllowance = allowance }
        let explanation: String
        if !withinRate {
            refused[.frameRate, default: 0] += 1
            explanation = "frames came faster than \(Int(rate)) a second (\(Int(2 * rate)) at once): the frame was refused"
        } else if !shares.takeFrame(stream.info.connectionId, kind: kind, now: now) {
            refused[.frameRate, default: 0] += 1
            let tokenRate = kind == .video ? limits.tokenShares.videoFramesPerSecond : limits.tokenShares.audioFramesPerSecond
            explanation = "this token's streams sent frames faster than \(Int(tokenRate)) a second together: the frame was refused"
        } else {
            let verdict = stream.timeline.admit(time, kind: kind, now: now)
            guard verdict != .accepted else {
                stream.refusing = false
                return nil
            }
            refused[.captureTime, default: 0] += 1
            explanation = verdict.explanation(kind: kind, time: time)
        }
        defer { stream.refusing = true }
        guard !stream.refusing else { return [] }
        return [.sendControl(.error(code: .malformed, message: "stream \(stream.info.streamId): " + explanation), to: stream.info.connectionId)]
    }

    /// Queues a frame for a subscriber and says to send it.
    private func send(
        _ frame: Frame, bytes: Int, to subscriberId: String, _ subscription: inout Subscription, streamId: UInt32, now: Double,
        arrival: UInt64, clears: Bool = true, fittedIn: Bool = false, catchUp: Bool = false
    ) -> Action {
        subscription.lastSent = arrival
        if subscription.inFlight.isEmpty { subscription.stalledSince = now }
        subscription.idleStart.sent(bytes, now: now)
        subscription.inFlight.append(InFlight(bytes: bytes, queuedAt: now, fittedIn: fittedIn))
        subscription.queuedBytes += bytes
        if fittedIn { subscription.fittedInBytes += bytes }
        return .sendFrame(
            frame, to: subscriberId, streamId: streamId, clearingLayer: clears && !subscription.readsLayers,
            catchUp: catchUp && subscription.readsCatchUp)
    }

    /// Whether a discardable frame of `bytes` above a subscriber's layers goes to it all the same: its link, at the
    /// lowest rate measured of late, would carry it behind what is queued within ``Limits/fitInMilliseconds``,
    /// and be done with it before the stream's next layer-0 frame is due, which it must not delay. A subscriber
    /// whose link has not been measured yet gets none.
    private func fits(_ bytes: Int, _ subscription: Subscription, queued: Double, stream: Stream, now: Double) -> Bool {
        guard !subscription.waitingForKeyframe, let rate = subscription.idleStart.rate ?? subscription.kernelRateLow ?? subscription.drainRate, rate > 0,
            let due = stream.layerZeroDue(after: now)
        else { return false }
        let done = queued + Double(bytes) / rate * 1000
        return done <= limits.fitInMilliseconds && now + done / 1000 <= due
    }

    /// A held frame will not be sent: a newer one goes to the subscriber, or it starts over.
    private mutating func dropHeld(_ subscription: inout Subscription) {
        guard subscription.held != nil else { return }
        subscription.held = nil
        thinnedFrames += 1
    }

    /// Sends a subscriber the frame it holds (``Subscription/held``) once its link has room for it in time
    /// (``fits(_:_:queued:stream:now:)``): a thinned subscriber's link, idle after a layer-0 frame, carries the
    /// newest picture there is instead of nothing until the next layer-0 frame.
    private mutating func releaseHeld(_ subscriberId: String, streamId: UInt32, now: Double) -> [Action] {
        guard var stream = streams[streamId], var subscription = stream.subscribers[subscriberId], let held = subscription.held,
            // Nothing older than what it was sent since (a catch-up) goes to be shown.
            subscription.lastSent.map({ held.arrival > $0 }) ?? false,
            fits(held.bytes, subscription, queued: subscription.queuedMilliseconds(now: now), stream: stream, now: now)
        else { return [] }
        subscription.held = nil
        fittedInFrames += 1
        let action = send(held.frame, bytes: held.bytes, to: subscriberId, &subscription, streamId: streamId, now: now, arrival: held.arrival, fittedIn: true)
        stream.subscribers[subscriberId] = subscription
        streams[streamId] = stream
        return [action]
    }

    /// Not even layer 0 fits: nothing more until a keyframe, which it gets once it has drained.
    private func skip(_ subscription: inout Subscription) {
        subscription.waitingForKeyframe = true
        subscription.needsRestart = true
        subscription.highestLayer = 0
        subscription.raisePending = false
    }

    /// Keeps track of how long the subscriber's queue has stayed short; once long enough, its layer goes up —
    /// if its link has shown it carries the layers up to that one with a quarter to spare (a layer that barely
    /// fits would fill the queue again, and a layer-0 frame behind it could miss its bound). What it has shown is
    /// the higher of the lowest recent kernel measure and the rate its frames went at from an idle start: a link
    /// that widened past the stream's rate is rarely busy enough for the kernel to measure it (its samples are
    /// limited by what the relay has to send), while each frame's time from an idle start still shows it.
    private func noteCalm(_ subscription: inout Subscription, queued: Double, now: Double, stream: Stream) {
        let next = min(subscription.highestLayer, stream.topLayer) + 1
        if queued > limits.raiseBelowMilliseconds {
            subscription.calmSince = now
            subscription.raisePending = false
        } else if next <= stream.topLayer, !subscription.waitingForKeyframe, now - subscription.calmSince >= limits.raiseAfterSeconds {
            let shown = [subscription.kernelRateLow, subscription.idleStart.rate].compactMap { $0 }.max()
            let room = (shown ?? subscription.drainRate ?? .infinity) >= 1.25 * stream.rate(upTo: next)
            let probe = now - subscription.calmSince >= subscription.probeAfterSeconds
            guard room || probe else { return }
            subscription.raisePending = true
            subscription.calmSince = now
            subscription.probedAt = room ? nil : now
            if room { subscription.probeAfterSeconds = 3 * limits.raiseAfterSeconds }
        }
    }

    /// A layer went again: if it came back by a probe less than 10 s ago, the next probe waits twice as long.
    private func noteProbeUndone(_ subscription: inout Subscription, now: Double) {
        if let probedAt = subscription.probedAt, now - probedAt < 10 {
            subscription.probeAfterSeconds = min(60, subscription.probeAfterSeconds * 2)
        }
        subscription.probedAt = nil
    }

    /// Tells a subscriber that reads layers what it now gets, when that changed.
    private func announce(_ subscriberId: String, _ subscription: inout Subscription, streamId: UInt32, topLayer: Int) -> [Action] {
        guard subscription.readsLayers else { return [] }
        let now = (layer: min(subscription.highestLayer, topLayer), waiting: subscription.waitingForKeyframe)
        guard subscription.announced.map({ $0 != now }) ?? (now.layer < topLayer || now.waiting) else { return [] }
        subscription.announced = now
        return [.sendControl(
            .subscriptionChanged(streamId: streamId, highestLayer: now.layer, layers: topLayer + 1, waitingForKeyframe: now.waiting),
            to: subscriberId)]
    }

    /// Starts a subscriber that skipped again, once it has drained and its own ceiling allows: from the cached
    /// pictures of its layers when they cost it less than twice a keyframe, else with a requested keyframe.
    private mutating func restart(_ subscriberId: String, streamId: UInt32, now: Double, cause: KeyframeCause) -> [Action] {
        guard var stream = streams[streamId], var subscription = stream.subscribers[subscriberId], subscription.needsRestart,
            subscription.inFlight.isEmpty, now - subscription.lastKeyframeRequest >= limits.subscriberKeyframeIntervalSeconds
        else { return [] }
        var actions: [Action] = []
        if let cache = stream.cache, let keyframe = cache.first {
            let rate = subscription.kernelRateLow ?? subscription.drainRate
            // A fresh picture would come with the next keyframe the stream's ceiling allows (at the publisher's next
            // frame at best), then take its time on this link: a catch-up that would take longer is not started.
            let ceilingAt = max(stream.lastKeyframeAt, stream.lastSubscriberKeyframeRequest) + limits.subscriberKeyframeCeilingSeconds
            let keyframeSeconds = max(0, ceilingAt - now) + (stream.frameInterval ?? 0) + (rate.map { Double(keyframe.bytes) / $0 } ?? 0)
            let freshPicture = keyframeSeconds * 1000
            if let plan = CatchUpPlan.make(
                cache: cache.map { .init(layer: $0.layer, bytes: $0.bytes, arrival: $0.arrival) },
                // A subscriber that asked itself (its decoder failed) holds nothing to go on from: the whole group.
                highestLayer: min(subscription.highestLayer, stream.topLayer), lastSent: cause == .subscriberAsked ? nil : subscription.lastSent,
                maximumBytes: min(2 * keyframe.bytes, limits.maximumQueuedBytes), bytesPerSecond: rate, freshPictureMilliseconds: freshPicture)
            {
                for (position, index) in plan.indices.enumerated() {
                    let cached = cache[index]
                    actions.append(send(
                        cached.frame, bytes: cached.bytes, to: subscriberId, &subscription, streamId: streamId, now: now, arrival: cached.arrival,
                        clears: cached.layer != 0, catchUp: position < plan.indices.count - 1))
                }
                if plan.continues { catchUpsContinued += 1 } else { catchUpsFromKeyframe += 1 }
                subscription.waitingForKeyframe = false
                subscription.needsRestart = false
                subscription.requests.satisfied()
                actions += announce(subscriberId, &subscription, streamId: streamId, topLayer: stream.topLayer)
                stream.subscribers[subscriberId] = subscription
                streams[streamId] = stream
                return actions
            }
        }
        subscription.lastKeyframeRequest = now
        stream.subscribers[subscriberId] = subscription
        streams[streamId] = stream
        return requestKeyframe(streamId, now: now, cause: cause)
    }

    /// A subscriber's own keyframe request, within its allowance: served as a skipped subscriber is, from the
    /// cache when that is cheap, else by a keyframe under the stream's ceiling.
    private mutating func serveKeyframeRequest(_ subscriberId: String, streamId: UInt32, now: Double) -> [Action] {
        streams[streamId]?.subscribers[subscriberId]?.waitingForKeyframe = true
        streams[streamId]?.subscribers[subscriberId]?.needsRestart = true
        return restart(subscriberId, streamId: streamId, now: now, cause: .subscriberAsked)
    }

    /// An audio frame arrived from `connectionId`: to every subscriber that asked for audio and is not too far
    /// behind. Never cached: a late joiner's sound starts with the next frame.
    public mutating func audioFrame(_ frame: Frame, header: AudioFrameHeader, from connectionId: String, now: Double) -> [Action] {
        receiveAudio(frame, header: header, from: connectionId, now: now).actions
    }

    /// ``audioFrame(_:header:from:now:)``, saying also whether the frame was admitted (see ``receive(_:header:size:from:now:)``).
    public mutating func receiveAudio(
        _ frame: Frame, header: AudioFrameHeader, from connectionId: String, now: Double
    ) -> (admitted: Bool, actions: [Action]) {
        guard var stream = streams[header.streamID], stream.info.connectionId == connectionId else {
            return (false, [.close(connectionId, .notFound, "stream \(header.streamID) is not yours: publish it first")])
        }
        if let refusal = admit(header.captureTime, kind: .audio, to: &stream, now: now) {
            streams[header.streamID] = stream
            return (false, refusal)
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
        return (true, actions)
    }

    /// An audio frame sent to a subscriber was written out.
    public mutating func audioFrameDelivered(to connectionId: String, streamId: UInt32) {
        guard let queued = streams[streamId]?.subscribers[connectionId]?.queuedAudio, queued > 0 else { return }
        streams[streamId]?.subscribers[connectionId]?.queuedAudio = queued - 1
    }

    public func queuedAudioFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.queuedAudio
    }

    /// Every subscriber connection, for the server to sample their sockets.
    public var subscriberIds: [String] {
        Array(Set(streams.values.flatMap { $0.subscribers.keys }))
    }

    /// The rate a subscriber's socket is to be paced at, in bytes a second, or nil for none: a subscriber thinned
    /// below the stream's top layer, or waiting to be restarted, whose link the kernel has measured, is paced at
    /// 1.25 times that measure (its largest over its subscriptions). A thin link's bottleneck then gets a frame
    /// about as fast as it drains it; sent at once, a 25 KB frame overflows a queue of a few packets and half of
    /// it goes again (measured on a 250 kbit/s link: 1.3 s a frame where 0.8 s would do). A quarter over the
    /// measure, the kernel's next measures can show a link that widened.
    public func pacingRate(for connectionId: String) -> Double? {
        var fastest: Double?
        for stream in streams.values {
            guard let subscription = stream.subscribers[connectionId] else { continue }
            guard subscription.highestLayer < stream.topLayer || subscription.needsRestart, let rate = subscription.kernelRate else { return nil }
            fastest = max(fastest ?? 0, 1.25 * rate)
        }
        return fastest
    }

    /// The subscriber connections whose links are timed closely (``Subscription/watchedClosely(topLayer:)``): the server
    /// samples them every tick, the others every half second.
    public var closelyWatchedSubscriberIds: [String] {
        Array(Set(streams.values.flatMap { stream in stream.subscribers.filter { $0.value.watchedClosely(topLayer: stream.topLayer) }.keys }))
    }

    /// What the kernel says of a subscriber's connection (`TCP_INFO`): its delivery rate when it had enough to send
    /// to measure it, and the bytes written but not yet acknowledged by the peer (in the network's queues, below
    /// the relay's). Both count in how much it has queued and how fast it drains.
    public mutating func linkMeasured(_ connectionId: String, deliveryBytesPerSecond: Double?, pendingBytes: Int, now: Double) {
        for streamId in streams.keys {
            guard var subscription = streams[streamId]?.subscribers[connectionId] else { continue }
            if let rate = deliveryBytesPerSecond, rate > 0 {
                subscription.kernelRate = subscription.kernelRate.map { 0.7 * $0 + 0.3 * rate } ?? rate
                subscription.kernelRateLow = min(rate, subscription.kernelRateLow.map { $0 * 1.02 } ?? rate)
            }
            subscription.hiddenBytes = pendingBytes
            subscription.idleStart.measured(pendingBytes: pendingBytes, queueEmpty: subscription.inFlight.isEmpty, now: now)
            streams[streamId]?.subscribers[connectionId] = subscription
        }
    }

    /// A frame sent to a subscriber was written out (the transport took it: with the relay's small socket
    /// buffers, about when it left). Measures the subscriber's drain rate; a subscriber that skipped and has now
    /// drained is restarted.
    public mutating func frameDelivered(to connectionId: String, streamId: UInt32, now: Double) -> [Action] {
        guard var subscription = streams[streamId]?.subscribers[connectionId], let sent = subscription.inFlight.popFirst() else { return [] }
        subscription.queuedBytes -= sent.bytes
        if sent.fittedIn { subscription.fittedInBytes -= sent.bytes }
        // Only a frame that waited behind the previous one measures the link: the gap between their deliveries is
        // the link carrying it. (A frame written to an idle connection is reported as soon as the socket and
        // channel buffers take it, long before it has left on a thin link.)
        let busy = sent.queuedAt < subscription.lastDeliveryAt ? now - subscription.lastDeliveryAt : 0
        if busy > 0 {
            let decay = 0.85
            subscription.drainedBytes = subscription.drainedBytes * decay + Double(sent.bytes)
            subscription.drainSeconds = subscription.drainSeconds * decay + busy
        }
        subscription.lastDeliveryAt = now
        subscription.stalledSince = subscription.inFlight.isEmpty ? nil : now
        streams[streamId]?.subscribers[connectionId] = subscription
        return restart(connectionId, streamId: streamId, now: now, cause: .subscriberBehind)
            + releaseHeld(connectionId, streamId: streamId, now: now)
    }

    /// Sends keyframe requests that were held back by the throttles, restarts subscribers whose own ceiling has
    /// passed, and evicts those that have taken nothing for ``Limits/stallSeconds``. Call periodically (every
    /// ~100 ms).
    public mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        for streamId in streams.keys.sorted() {
            guard let stream = streams[streamId] else { continue }
            for (subscriberId, subscription) in stream.subscribers.sorted(by: { $0.key < $1.key }) {
                if let stalledSince = subscription.stalledSince, now - stalledSince >= limits.stallSeconds {
                    evictedSubscribers += 1
                    streams[streamId]?.subscribers[subscriberId] = nil
                    actions.append(.evict(
                        subscriberId, reason: "it took none of the media queued for it for \(Int(limits.stallSeconds)) s"))
                } else if streams[streamId]?.subscribers[subscriberId]?.requests.takeWaiting(now: now) == true {
                    actions += serveKeyframeRequest(subscriberId, streamId: streamId, now: now)
                } else if subscription.needsRestart {
                    actions += restart(subscriberId, streamId: streamId, now: now, cause: .subscriberBehind)
                } else if subscription.held != nil {
                    actions += releaseHeld(subscriberId, streamId: streamId, now: now)
                }
            }
            if let cause = streams[streamId]?.keyframeRequestPending { actions += requestKeyframe(streamId, now: now, cause: cause) }
        }
        return actions
    }

    private mutating func requestKeyframe(_ streamId: UInt32, now: Double, cause: KeyframeCause) -> [Action] {
        guard var stream = streams[streamId] else { return [] }
        defer { streams[streamId] = stream }
        let onSubscribersBehalf = cause != .relay
        if now - stream.lastKeyframeRequest < limits.keyframeRequestInterval
            || (onSubscribersBehalf
                && now - max(stream.lastKeyframeAt, stream.lastSubscriberKeyframeRequest) < limits.subscriberKeyframeCeilingSeconds)
        {
            if stream.keyframeRequestPending == nil || !onSubscribersBehalf { stream.keyframeRequestPending = cause }
            return []
        }
        if onSubscribersBehalf { stream.lastSubscriberKeyframeRequest = now }
        stream.lastKeyframeRequest = now
        stream.keyframeRequestPending = nil
        keyframeRequestsSent += 1
        keyframeRequestsByCause[cause, default: 0] += 1
        return [.sendControl(.requestKeyframe(streamId: streamId), to: stream.info.connectionId)]
    }
}
