/// When a stream's publisher is asked for a keyframe. At most one request per
/// ``RouterLimits/keyframeRequestInterval`` (those in between are merged into the next allowed one); and those
/// made on subscribers' behalf — a joiner the cache cannot start, one that fell behind, one whose decoder failed —
/// at most one per ``RouterLimits/subscriberKeyframeCeilingSeconds`` after the stream's last keyframe or such
/// request, so that no subscriber makes every other pay for a keyframe more often. The relay's own requests (a
/// recording starts, an HLS segment) are not under that ceiling. Pure: the router passes the time.
struct KeyframeThrottle {
    private let interval: Double
    private let subscriberCeiling: Double
    private var lastRequest = -Double.infinity
    /// A request held back, to go when the throttles allow (the relay's own cause wins over a subscriber's).
    private(set) var pending: KeyframeCause?
    /// When the last keyframe came.
    private(set) var lastKeyframeAt = -Double.infinity
    private var lastSubscriberRequest = -Double.infinity

    init(limits: RouterLimits) {
        interval = limits.keyframeRequestInterval
        subscriberCeiling = limits.subscriberKeyframeCeilingSeconds
    }

    /// A keyframe came: nothing is pending any more.
    mutating func keyframeArrived(now: Double) {
        pending = nil
        lastKeyframeAt = now
    }

    /// A keyframe is wanted for `cause`: true when the publisher is to be asked now; else it is pending.
    mutating func request(_ cause: KeyframeCause, now: Double) -> Bool {
        let onSubscribersBehalf = cause != .relay
        if now - lastRequest < interval || (onSubscribersBehalf && now < subscriberCeilingEnds) {
            if pending == nil || !onSubscribersBehalf { pending = cause }
            return false
        }
        if onSubscribersBehalf { lastSubscriberRequest = now }
        lastRequest = now
        pending = nil
        return true
    }

    /// When a keyframe may next be asked on a subscriber's behalf.
    var subscriberCeilingEnds: Double { max(lastKeyframeAt, lastSubscriberRequest) + subscriberCeiling }
}
