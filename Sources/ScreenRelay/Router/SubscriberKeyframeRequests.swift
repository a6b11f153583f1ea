/// What one subscriber's own keyframe requests (`requestKeyframe`: its decoder failed) get from the relay.
///
/// Within its allowance (``StreamRouter/Limits/keyframeRequestsPerSubscriber`` in
/// ``StreamRouter/Limits/keyframeRequestWindowSeconds``, as Jitsi Videobridge allows 3 per 10 s) each request is
/// served: from the cached pictures when they can start it, else by a keyframe under the stream's ceiling. Past
/// it, requests are merged into one that waits for the allowance to come back, so that a decoder that really
/// failed still recovers; and a subscriber that goes on asking, ``StreamRouter/Limits/ignoredKeyframeRequestsBeforeClose``
/// times with none served, is closed. A request loop thus costs the relay a few replays per window, and the
/// others nothing.
struct SubscriberKeyframeRequests: Sendable {
    enum Decision: Equatable {
        /// Serve it now.
        case serve
        /// Over the allowance: it waits, merged with any other waiting request.
        case wait
        /// It kept asking: close it.
        case close
    }

    private var allowance: TokenBucket
    private let closeAfter: Int
    /// A request waits for the allowance.
    private(set) var waiting = false
    /// Requests over the allowance since one was last served as it came.
    private(set) var ignored = 0

    init(requests: Int, perSeconds window: Double, closeAfter: Int) {
        allowance = TokenBucket(rate: Double(requests) / max(window, 0.001), burst: Double(max(requests, 1)))
        self.closeAfter = closeAfter
    }

    /// A request came.
    mutating func asked(now: Double) -> Decision {
        // One already waits: this one merges with it (the waiting one is served first, on the tick).
        if !waiting, allowance.take(now: now) {
            waiting = false
            ignored = 0
            return .serve
        }
        ignored += 1
        waiting = true
        return ignored >= closeAfter ? .close : .wait
    }

    /// Whether a waiting request may be served now (its allowance came back); if so it is no longer waiting.
    /// (Only a request served as it came, a subscriber back within its allowance, clears the count of ignored
    /// ones: a loop keeps one request waiting, so it is these that spend its allowance.)
    mutating func takeWaiting(now: Double) -> Bool {
        guard waiting, allowance.take(now: now) else { return false }
        waiting = false
        return true
    }

    /// A keyframe reached the subscriber by other means: nothing waits any more.
    mutating func satisfied() { waiting = false }
}
