/// One subscriber of one stream, as the router keeps it: its link (``SubscriberLink``), its layers
/// (``LayerPolicy``), its keyframe requests, what it reads, and where it stands — waiting for a keyframe, to be
/// restarted, or holding a frame for its link to have room.
struct RoutedSubscription<Frame> {
    var link: SubscriberLink
    var layers: LayerPolicy
    /// Its own keyframe requests and their allowance.
    var requests: SubscriberKeyframeRequests
    var waitingForKeyframe = true
    /// It skipped to the next keyframe and wants to be restarted once it has drained.
    var needsRestart = false
    /// When a keyframe was last asked for its restart (``RouterLimits/subscriberKeyframeIntervalSeconds``).
    var restartKeyframeAskedAt = -Double.infinity
    /// It reads layer ids and `subscriptionChanged` (protocol 3).
    var readsLayers = false
    /// It reads the catch-up flag (protocol 5): cached pictures go to it flagged, decoded and not shown.
    var readsCatchUp = false
    /// The arrival number of the last video frame sent to it: a frame it is sent to be shown is newer.
    var lastSent: UInt64?
    /// What it was last told (`subscriptionChanged`).
    var announced: (layer: Int, waiting: Bool)?
    /// The newest discardable frame above its layers that its link had no room for when it came: sent once the
    /// link has room in time, dropped when a newer frame goes to it. Every holder of a stream holds the same frame,
    /// its newest, so this costs a stream one frame at most.
    var held: (frame: Frame, bytes: Int, arrival: UInt64)?
    /// It asked for audio frames; how many it has in flight.
    var audio = false
    var queuedAudio = 0
    /// What its stream's gauges count it as (nil: not counted yet).
    var gauged: SubscriptionGauges.Reading?

    init(now: Double, limits: RouterLimits) {
        link = SubscriberLink(now: now)
        layers = LayerPolicy(now: now, limits: limits)
        requests = SubscriberKeyframeRequests(
            requests: limits.keyframeRequestsPerSubscriber, perSeconds: limits.keyframeRequestWindowSeconds,
            closeAfter: limits.ignoredKeyframeRequestsBeforeClose)
    }

    /// Its link is timed closely (sampled every tick rather than every half second): it is thinned, and its busy
    /// periods and held frames decide what more it gets.
    func watchedClosely(topLayer: Int) -> Bool { held != nil || link.idleStart.isTiming && layers.highest < topLayer }

    /// What its stream's gauges are to count it as now.
    func reading(topLayer: Int) -> SubscriptionGauges.Reading {
        SubscriptionGauges.Reading(watched: watchedClosely(topLayer: topLayer), layer: waitingForKeyframe ? nil : layers.effective(topLayer: topLayer))
    }
}
