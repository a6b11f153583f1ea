import ScreenWire

/// Which temporal layers one subscriber gets, and what becomes of each frame offered to it: sent, fitted in above
/// its layers, held, thinned, or — when not even layer 0 fits — skipped until it is restarted. Pure: the router
/// gives it the frame, what is queued for the subscriber, and what its link has shown, with the time.
///
/// Past ``RouterLimits/thinAboveMilliseconds`` queued, its highest layer goes down a step (at most every
/// ``RouterLimits/thinStepSeconds``); under ``RouterLimits/raiseBelowMilliseconds`` for
/// ``RouterLimits/raiseAfterSeconds`` it goes up a step at the next layer-0 frame (the higher layers' next frames
/// reference it), when the link has shown it carries the layers up to that one with ``headroom`` to spare — or,
/// as a probe, after ``probeAfterSeconds`` of calm without that showing (the kernel measures a link only while
/// data queues).
struct LayerPolicy {
    /// What becomes of one frame.
    enum Verdict: Equatable {
        /// It goes, as one of the subscriber's layers (a keyframe: it starts over from it).
        case send
        /// Above its layers, it goes all the same: its link has room for it in time.
        case fitIn
        /// Above its layers, discardable, and no room for it now: held, in case the link has room before the
        /// next layer-0 frame.
        case hold
        /// Not sent: above its layers (or its layer just went, for lack of room).
        case thin
        /// Not even this layer-0 frame or keyframe fits: nothing more until it is restarted.
        case skip
    }

    /// One frame as the subscriber would get it.
    struct Offer {
        var isKeyframe: Bool
        var layer: Int
        /// The highest layer the stream's frames have carried.
        var topLayer: Int
        /// The publisher's frames above layer 0 may be dropped one by one.
        var discardable: Bool
        /// What is queued for the subscriber, in milliseconds at its drain rate, and of that what its own layers
        /// take (``SubscriberLink/layersMilliseconds(queued:)``).
        var queuedMilliseconds: Double
        var layersMilliseconds: Double
        /// The frame keeps its queue within ``RouterLimits/maximumQueuedMilliseconds`` and
        /// ``RouterLimits/maximumQueuedBytes``.
        var withinQueueBounds: Bool
        /// The subscriber waits for a keyframe (this one, then): its layers do not go up meanwhile.
        var waitingForKeyframe = false
    }

    /// How much more than a layer's rate a link must have shown to get it back.
    static var headroom: Double { 1.25 }
    /// A probe undone within this many seconds makes the next one wait twice as long, up to ``longestProbeWait``.
    static var probeUndoneWithinSeconds: Double { 10 }
    static var longestProbeWait: Double { 60 }
    /// The first probe waits this many times ``RouterLimits/raiseAfterSeconds``.
    static var probeWaitInRaiseIntervals: Double { 3 }

    /// Frames of higher layers are not sent (beyond what fits in).
    private(set) var highest = MediaFrameHeader.Flags.highestLayer
    /// It has been calm long enough: the layer goes up at the next layer-0 frame.
    private(set) var raisePending = false
    private var lastChange = -Double.infinity
    /// A layer may come back without the link showing room for it after this much calm; doubled each time a probe
    /// is undone soon, to ``longestProbeWait``.
    private(set) var probeAfterSeconds: Double
    /// When the last raise was a probe (nil: it was not).
    private var probedAt: Double?
    /// Since when its queue has stayed under ``RouterLimits/raiseBelowMilliseconds``.
    private var calmSince: Double
    private let limits: RouterLimits

    init(now: Double, limits: RouterLimits) {
        self.limits = limits
        calmSince = now
        probeAfterSeconds = Self.probeWaitInRaiseIntervals * limits.raiseAfterSeconds
    }

    /// The highest layer it gets of a stream whose frames carry up to `topLayer`.
    func effective(topLayer: Int) -> Int { min(highest, topLayer) }

    /// What becomes of `offer`. `linkRate`: what the link has shown it carries (nil: unknown, which does not keep
    /// a layer from coming back); `rateUpTo`: the stream's bytes a second of layers 0…n; `fitsAbove`: a frame above
    /// its layers would be carried in time (asked only of such a frame, when the stream's layers are discardable).
    mutating func decide(
        _ offer: Offer, linkRate: Double?, rateUpTo: (Int) -> Double, fitsAbove: () -> Bool, now: Double
    ) -> Verdict {
        noteCalm(queued: offer.layersMilliseconds, topLayer: offer.topLayer, mayRaise: !offer.waitingForKeyframe, linkRate: linkRate, rateUpTo: rateUpTo, now: now)
        // A keyframe starts everyone over: sent whenever what is queued leaves room for it.
        if offer.isKeyframe { return offer.withinQueueBounds ? .send : skip() }
        if offer.layer == 0, raisePending {
            raisePending = false
            highest = min(offer.topLayer, highest + 1)
            lastChange = now
        }
        if offer.layersMilliseconds > limits.thinAboveMilliseconds, highest > 0, offer.layer > 0, now - lastChange >= limits.thinStepSeconds {
            highest = min(highest, offer.topLayer) - 1
            lastChange = now
            raisePending = false
            noteProbeUndone(now: now)
        }
        if offer.layer > highest {
            guard offer.discardable else { return .thin }
            return fitsAbove() ? .fitIn : .hold
        }
        if !offer.withinQueueBounds {
            guard offer.layer > 0 else { return skip() }
            // Later frames of this layer may reference this one: the layer goes until it is raised again.
            highest = offer.layer - 1
            lastChange = now
            noteProbeUndone(now: now)
            return .thin
        }
        return .send
    }

    /// Restarted from a long group of pictures, it gets layer 0 until its link has shown it carries more.
    mutating func startAtLayerZero() { highest = 0 }

    /// Not even layer 0 fits: it starts again from layer 0 once restarted.
    private mutating func skip() -> Verdict {
        highest = 0
        raisePending = false
        return .skip
    }

    /// Keeps track of how long the queue has stayed short; once long enough, the layer goes up at the next layer-0
    /// frame — if the link has shown it carries the layers up to that one with ``headroom`` to spare (a layer that
    /// barely fits would fill the queue again, and a layer-0 frame behind it could miss its bound), or as a probe.
    private mutating func noteCalm(queued: Double, topLayer: Int, mayRaise: Bool, linkRate: Double?, rateUpTo: (Int) -> Double, now: Double) {
        let next = min(highest, topLayer) + 1
        if queued > limits.raiseBelowMilliseconds {
            calmSince = now
            raisePending = false
        } else if next <= topLayer, mayRaise, now - calmSince >= limits.raiseAfterSeconds {
            let room = (linkRate ?? .infinity) >= Self.headroom * rateUpTo(next)
            let probe = now - calmSince >= probeAfterSeconds
            guard room || probe else { return }
            raisePending = true
            calmSince = now
            probedAt = room ? nil : now
            if room { probeAfterSeconds = Self.probeWaitInRaiseIntervals * limits.raiseAfterSeconds }
        }
    }

    /// A layer went again: if it came back by a probe lately, the next probe waits twice as long.
    private mutating func noteProbeUndone(now: Double) {
        if let probedAt, now - probedAt < Self.probeUndoneWithinSeconds {
            probeAfterSeconds = min(Self.longestProbeWait, probeAfterSeconds * 2)
        }
        probedAt = nil
    }
}
