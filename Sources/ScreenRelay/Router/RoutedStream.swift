import ScreenMedia
import ScreenWire

/// One published stream and its fan-out: its subscribers, its cached group of pictures (``PictureCache``), its
/// pace (``StreamCadence``), its keyframe requests (``KeyframeThrottle``) and what it admits
/// (``FrameAdmission``). Each frame is offered to each subscriber's ``LayerPolicy``; what that decides, this
/// does. Pure, like the ``StreamRouter`` that holds it: it returns the actions to perform, and counts into the
/// router's ``RouterCounters``.
struct RoutedStream<Frame> {
    typealias Action = StreamRouter<Frame>.Action

    var info: StreamInfo
    let limits: RouterLimits
    var subscribers = SubscriberTable<RoutedSubscription<Frame>>()
    /// Its subscriptions closely watched and by layer, kept as each changes (``note(_:_:)``).
    private(set) var gauges = SubscriptionGauges()
    var cache: PictureCache<Frame>
    var cadence = StreamCadence()
    var keyframes: KeyframeThrottle
    var admission: FrameAdmission
    /// Video frames admitted so far: each frame's arrival number (the publisher's sequence numbers are its own).
    private(set) var arrivals: UInt64 = 0
    /// The publisher asked for acknowledgements.
    let acknowledges: Bool
    /// The publisher's frames above layer 0 are discardable one by one (`publish` with `discardableLayers`).
    let discardableLayers: Bool
    /// The publisher answers `requestRefresh` (protocol 6).
    let refreshes: Bool

    init(info: StreamInfo, limits: RouterLimits, acknowledges: Bool, discardableLayers: Bool, refreshes: Bool = false) {
        self.info = info
        self.limits = limits
        self.acknowledges = acknowledges
        self.discardableLayers = discardableLayers
        self.refreshes = refreshes
        cache = PictureCache(maximumBytes: limits.maximumCachedBytes)
        keyframes = KeyframeThrottle(limits: limits)
        admission = FrameAdmission(limits: limits)
    }

    var streamId: UInt32 { info.streamId }

    /// A new subscriber: it starts with the cached group of pictures (a long one as its layer-0 frames only:
    /// nobody knows yet what its link carries; all but the newest as catch-up), so it shows the current screen at
    /// once; with no usable cache it waits for a requested keyframe.
    /// `unreadSince`: since when its connection has taken nothing of an earlier subscription's frames.
    mutating func subscribe(
        _ connectionId: String, audio: Bool, layers: Bool, catchUp: Bool, unreadSince: Double? = nil, now: Double,
        counters: inout RouterCounters
    ) -> [Action] {
        var subscription = RoutedSubscription<Frame>(now: now, limits: limits)
        if let unreadSince { subscription.link.carryStall(since: unreadSince) }
        subscription.audio = audio
        subscription.readsLayers = layers
        subscription.readsCatchUp = catchUp
        guard let joining = cache.joining(maximumBytes: limits.maximumQueuedBytes) else {
            note(connectionId, &subscription)
            subscribers.insert(subscription, for: connectionId)
            return requestKeyframe(now: now, cause: .newSubscriber, counters: &counters)
        }
        if joining.layerZeroOnly { subscription.layers.startAtLayerZero() }
        var actions: [Action] = []
        for (index, cached) in joining.entries.enumerated() {
            actions.append(send(
                cached.frame, bytes: cached.bytes, to: connectionId, &subscription, now: now, arrival: cached.arrival,
                clears: cached.layer != 0, catchUp: index < joining.entries.count - 1))
        }
        subscription.waitingForKeyframe = false
        note(connectionId, &subscription)
        subscribers.insert(subscription, for: connectionId)
        return actions
    }

    /// A subscription ends (unsubscribed, its connection gone, or evicted).
    @discardableResult
    mutating func unsubscribe(_ connectionId: String) -> RoutedSubscription<Frame>? {
        guard let subscription = subscribers.remove(connectionId) else { return nil }
        if let reading = subscription.gauged { gauges.remove(connectionId, reading) }
        return subscription
    }

    /// Counts a subscription in the gauges as it is now (after anything that may have changed it).
    mutating func note(_ subscriberId: String, _ subscription: inout RoutedSubscription<Frame>) {
        let reading = subscription.reading(topLayer: cadence.topLayer)
        guard subscription.gauged != reading else { return }
        gauges.change(subscriberId, from: subscription.gauged, to: reading)
        subscription.gauged = reading
    }

    /// ``note(_:_:)`` of the subscription at `position`, where it is.
    mutating func note(at position: Int) {
        let reading = subscribers.values[position].reading(topLayer: cadence.topLayer)
        guard subscribers.values[position].gauged != reading else { return }
        gauges.change(subscribers.ids[position], from: subscribers.values[position].gauged, to: reading)
        subscribers.values[position].gauged = reading
    }

    /// An admitted video frame: into the cache and the pace, and offered to every subscriber in turn.
    mutating func route(_ frame: Frame, header: MediaFrameHeader, size: Int, now: Double, counters: inout RouterCounters) -> [Action] {
        let layer = header.temporalLayer
        arrivals &+= 1
        let arrival = arrivals
        cadence.count(size, layer: layer, now: now)
        if header.isKeyframe { keyframes.keyframeArrived(now: now) }
        cache.add(frame, layer: layer, bytes: size, arrival: arrival, isKeyframe: header.isKeyframe)
        var actions: [Action] = []
        var skipped = false
        // The table is taken out while each subscription in it changes in place (no copy, and no access to the
        // stream overlapping one to its table).
        var table = SubscriberTable<RoutedSubscription<Frame>>()
        swap(&table, &subscribers)
        for position in table.indices {
            skipped = offer(
                frame, header: header, size: size, arrival: arrival, to: table.ids[position], &table.values[position], now: now,
                actions: &actions, counters: &counters) || skipped
            note(table.ids[position], &table.values[position])
        }
        swap(&table, &subscribers)
        if skipped {
            // Those with an empty queue (they took the frame before) restart at once.
            for subscriberId in subscribers.ids { actions += restart(subscriberId, now: now, cause: .subscriberBehind, counters: &counters) }
        }
        return actions
    }

    /// Offers one frame to one subscriber and does what its layer policy decides; true when it skipped.
    private func offer(
        _ frame: Frame, header: MediaFrameHeader, size: Int, arrival: UInt64, to subscriberId: String,
        _ subscription: inout RoutedSubscription<Frame>, now: Double, actions: inout [Action], counters: inout RouterCounters
    ) -> Bool {
        if subscription.waitingForKeyframe && !header.isKeyframe {
            counters.droppedFrames += 1
            return false
        }
        let queued = subscription.link.queuedMilliseconds(now: now)
        let offer = LayerPolicy.Offer(
            isKeyframe: header.isKeyframe, layer: header.temporalLayer, topLayer: cadence.topLayer, discardable: discardableLayers,
            queuedMilliseconds: queued, layersMilliseconds: subscription.link.layersMilliseconds(queued: queued),
            withinQueueBounds: queued <= limits.maximumQueuedMilliseconds && subscription.link.queuedBytes + size <= limits.maximumQueuedBytes,
            waitingForKeyframe: subscription.waitingForKeyframe)
        let link = subscription.link
        let verdict = subscription.layers.decide(
            offer, linkRate: link.shownRate ?? link.drainRate, rateUpTo: cadence.rate(upTo:),
            fitsAbove: { !offer.waitingForKeyframe && fits(size, link, queued: queued, now: now) }, now: now)
        switch verdict {
        case .send:
            if header.isKeyframe {
                subscription.waitingForKeyframe = false
                subscription.needsRestart = false
                subscription.requests.satisfied()
            }
            dropHeld(&subscription, counters: &counters)
            actions.append(send(frame, bytes: size, to: subscriberId, &subscription, now: now, arrival: arrival, clears: header.temporalLayer != 0))
        case .fitIn:
            dropHeld(&subscription, counters: &counters)
            counters.fittedInFrames += 1
            actions.append(send(frame, bytes: size, to: subscriberId, &subscription, now: now, arrival: arrival, fittedIn: true))
            return false
        case .hold:
            // Sent once its link has room (``releaseHeld``); newer frames take its place.
            dropHeld(&subscription, counters: &counters)
            subscription.held = (frame, size, arrival)
        case .thin:
            counters.thinnedFrames += 1
        case .skip:
            counters.droppedFrames += 1
            dropHeld(&subscription, counters: &counters)
            subscription.waitingForKeyframe = true
            subscription.needsRestart = true
        }
        actions += announce(subscriberId, &subscription)
        return verdict == .skip
    }

    /// An admitted audio frame: to every subscriber that asked for audio and is not too far behind (its own queue,
    /// ``RouterLimits/maximumQueuedAudioFrames``, past which frames are dropped one by one). Never cached: a late
    /// joiner's sound starts with the next frame.
    mutating func routeAudio(_ frame: Frame, now: Double, counters: inout RouterCounters) -> [Action] {
        var actions: [Action] = []
        for position in subscribers.indices where subscribers.values[position].audio {
            guard subscribers.values[position].queuedAudio < limits.maximumQueuedAudioFrames else {
                counters.droppedAudioFrames += 1
                continue
            }
            subscribers.values[position].queuedAudio += 1
            actions.append(.sendAudio(frame, to: subscribers.ids[position], streamId: streamId))
        }
        return actions
    }

    /// Queues a frame for a subscriber and says to send it.
    func send(
        _ frame: Frame, bytes: Int, to subscriberId: String, _ subscription: inout RoutedSubscription<Frame>, now: Double,
        arrival: UInt64, clears: Bool = true, fittedIn: Bool = false, catchUp: Bool = false
    ) -> Action {
        subscription.lastSent = arrival
        subscription.link.sent(bytes, fittedIn: fittedIn, now: now)
        return .sendFrame(
            frame, to: subscriberId, streamId: streamId, clearingLayer: clears && !subscription.readsLayers,
            catchUp: catchUp && subscription.readsCatchUp)
    }

    /// Whether a discardable frame of `bytes` above a subscriber's layers goes to it all the same: its link would
    /// carry it behind what is queued within ``RouterLimits/fitInMilliseconds``, and be done with it before the
    /// stream's next layer-0 frame is due, which it must not delay. A link not measured yet carries none. (Not
    /// for a subscriber waiting for a keyframe: it could not decode it.)
    func fits(_ bytes: Int, _ link: SubscriberLink, queued: Double, now: Double) -> Bool {
        guard let done = link.millisecondsToCarry(bytes, behind: queued),
            let due = cadence.layerZeroDue(after: now)
        else { return false }
        return done <= limits.fitInMilliseconds && now + done / 1000 <= due
    }

    /// A held frame will not be sent: a newer one goes to the subscriber, or it starts over.
    func dropHeld(_ subscription: inout RoutedSubscription<Frame>, counters: inout RouterCounters) {
        guard subscription.held != nil else { return }
        subscription.held = nil
        counters.thinnedFrames += 1
    }

    /// Tells a subscriber that reads layers what it now gets, when that changed.
    func announce(_ subscriberId: String, _ subscription: inout RoutedSubscription<Frame>) -> [Action] {
        guard subscription.readsLayers else { return [] }
        let topLayer = cadence.topLayer
        let now = (layer: subscription.layers.effective(topLayer: topLayer), waiting: subscription.waitingForKeyframe)
        guard subscription.announced.map({ $0 != now }) ?? (now.layer < topLayer || now.waiting) else { return [] }
        subscription.announced = now
        return [.sendControl(
            .subscriptionChanged(streamId: streamId, highestLayer: now.layer, layers: topLayer + 1, waitingForKeyframe: now.waiting),
            to: subscriberId)]
    }
}
