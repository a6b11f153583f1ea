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
    public let sessionId: String
    public let limits: Limits
    /// Whether connections with the publisher role may send signals (moderators and subscribers always may).
    public let publishersMaySignal: Bool
    /// What it counted (the relay folds them into its metrics).
    public internal(set) var counters = RouterCounters()
    var connections: [String: ConnectionInfo] = [:]
    /// Order of joining, so announcements list connections the same way every time.
    var connectionOrder: [String] = []
    var signals: SignalGate
    /// How often each connection and token may change subscriptions and streams, and join.
    var rates: ControlRates
    /// Joins and leaves not yet told to the members (``announcementSeconds``).
    var membership = MembershipAnnouncements()
    /// Each token's share of the session: its connections, streams, signals and frames together.
    var shares: TokenShares
    var streams: [UInt32: RoutedStream<Frame>] = [:]
    var nextStreamId: UInt32 = 1
    /// Which streams can have, or have, a rendition, and who waits for one (protocol 7).
    var renditions = RenditionBook()
    /// Since when each connection that ended a subscription with frames it never took has taken nothing: its next
    /// subscription's stall counts from then, so that subscribing again does not restart the stall limit. One
    /// entry a connection, gone with its first delivery or its departure.
    var unreadSince: [String: Double] = [:]

    /// Joins and leaves are told to the members at most this often, those that cancel out within it not at all.
    static var announcementSeconds: Double { 1 }

    /// A thinned subscriber's socket is paced this much over the kernel's measure of its link (``pacingRate(for:)``).
    static var pacingHeadroom: Double { 1.25 }

    public init(sessionId: String, limits: Limits = Limits(), publishersMaySignal: Bool = true) {
        self.sessionId = sessionId
        self.limits = limits
        self.publishersMaySignal = publishersMaySignal
        signals = SignalGate(limits: limits)
        rates = ControlRates(limits: limits.controlRates)
        shares = TokenShares(limits: limits.tokenShares)
    }

    public var isEmpty: Bool { connections.isEmpty }
    /// The published streams, renditions left out (they are not announced).
    public var streamInfos: [StreamInfo] { streams.keys.sorted().compactMap { streams[$0]?.info }.filter { $0.renditionOf == nil } }
    /// How many streams are published, renditions left out (without building ``streamInfos``: asked after every frame).
    public var streamCount: Int { streams.count - renditions.primaryOf.count }
    public var connectionInfos: [ConnectionInfo] { connectionOrder.compactMap { connections[$0] } }
    public func streamInfo(_ streamId: UInt32) -> StreamInfo? { streams[streamId]?.info }
    public func subscriberCount(of streamId: UInt32) -> Int { streams[streamId]?.subscribers.count ?? 0 }
    public func queuedFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.link.inFlight.count
    }

    /// The highest temporal layer a subscriber gets now (nil: not subscribed).
    public func highestLayer(for connectionId: String, streamId: UInt32) -> Int? {
        guard let stream = streams[streamId], let subscription = stream.subscribers[connectionId] else { return nil }
        return subscription.layers.effective(topLayer: stream.cadence.topLayer)
    }

    /// How many subscribers of all streams get each highest layer, and how many wait for a keyframe (`nil`).
    public var subscribersByLayer: [Int?: Int] {
        // Each stream keeps its own count as its subscriptions change (``SubscriptionGauges``).
        guard streams.count > 1 else { return streams.first?.value.gauges.byLayer ?? [:] }
        return streams.values.reduce(into: [:]) { counts, stream in counts.merge(stream.gauges.byLayer, uniquingKeysWith: +) }
    }

    public func queuedAudioFrames(for connectionId: String, streamId: UInt32) -> Int? {
        streams[streamId]?.subscribers[connectionId]?.queuedAudio
    }

    /// Every subscriber connection, in the order they joined, for the server to sample their sockets.
    public var subscriberIds: [String] {
        connectionOrder.filter { id in streams.values.contains { $0.subscribers.contains(id) } }
    }

    /// The subscriber connections whose links are timed closely (``RoutedSubscription/watchedClosely(topLayer:)``),
    /// each once, in the order of their ids: the server samples them every tick, the others every half second.
    /// Kept by each stream as its subscriptions change (``SubscriptionGauges``): no walk of the subscriptions.
    public var closelyWatchedSubscriberIds: [String] {
        guard streams.count > 1 else { return streams.first?.value.gauges.watched.sorted() ?? [] }
        return streams.values.reduce(into: Set<String>()) { $0.formUnion($1.gauges.watched) }.sorted()
    }

    // MARK: Connections

    /// A client said hello with a valid token (`token`: its id; nil, a token of its own): welcome it (the others are
    /// told on a later ``tick(now:)``, ``MembershipAnnouncements``), or close it when its token or the session holds all the connections they may.
    public mutating func connect(_ connection: ConnectionInfo, token: String? = nil, now: Double = 0) -> [Action] {
        if let token, let refusal = rates.admit(.join, connectionId: connection.connectionId, token: token, now: now) {
            counters.refused[.joinRate, default: 0] += 1
            return [.close(connection.connectionId, .rateLimited, refusal)]
        }
        if let refusal = shares.join(connection.connectionId, token: token ?? connection.connectionId, role: connection.role) {
            switch refusal {
            case .connectionsPerToken: counters.refused[.connectionsPerToken, default: 0] += 1
            case .connectionsPerSession, .viewerSeats: counters.refused[.connectionsPerSession, default: 0] += 1
            }
            return [.close(connection.connectionId, .full, refusal.sentence)]
        }
        let actions: [Action] = [
            .sendControl(
                .welcome(
                    connectionId: connection.connectionId, sessionId: sessionId, role: connection.role,
                    streams: streamInfos, connections: welcomeConnections),
                to: connection.connectionId)
        ]
        membership.joined(connection)
        connections[connection.connectionId] = connection
        connectionOrder.append(connection.connectionId)
        return actions
    }

    /// A client left (closed, failed or was closed): its streams end, and everyone is told (its departure on a later
    /// ``tick(now:)``).
    public mutating func disconnect(_ connectionId: String, now: Double = 0) -> [Action] {
        guard connections.removeValue(forKey: connectionId) != nil else { return [] }
        connectionOrder.removeAll { $0 == connectionId }
        signals.forget(connectionId)
        rates.forget(connectionId)
        var actions: [Action] = []
        for streamId in streams.keys.sorted() {
            if streams[streamId]?.info.connectionId == connectionId {
                actions += endStream(streamId, reason: "disconnected", now: now)
            } else {
                streams[streamId]?.unsubscribe(connectionId)
            }
        }
        renditions.forget(connectionId)
        unreadSince.removeValue(forKey: connectionId)
        shares.leave(connectionId)
        membership.left(connectionId)
        return actions
    }
}
