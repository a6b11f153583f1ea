/// What a stream does between its frames: deliveries and the kernel's measures of each subscriber's link, held
/// frames released when a link has room, subscribers restarted once they have drained (from the cache, or with a
/// keyframe under the throttles), keyframe requests, evictions.
extension RoutedStream {
    /// A frame sent to a subscriber was written out: a subscriber that skipped and has now drained is restarted;
    /// one holding a frame gets it if its link has room.
    mutating func delivered(to subscriberId: String, now: Double, counters: inout RouterCounters) -> [Action] {
        guard let position = subscribers.position(of: subscriberId), subscribers.values[position].link.delivered(now: now) else { return [] }
        let actions = restart(subscriberId, now: now, cause: .subscriberBehind, counters: &counters)
            + releaseHeld(subscriberId, now: now, counters: &counters)
        note(at: position)
        return actions
    }

    /// An audio frame sent to a subscriber was written out.
    mutating func audioDelivered(to subscriberId: String) {
        guard let position = subscribers.position(of: subscriberId), subscribers.values[position].queuedAudio > 0 else { return }
        subscribers.values[position].queuedAudio -= 1
    }

    /// What the kernel says of a subscriber's connection (``SubscriberLink/measured(deliveryBytesPerSecond:pendingBytes:now:)``).
    mutating func linkMeasured(_ subscriberId: String, deliveryBytesPerSecond: Double?, pendingBytes: Int, now: Double) {
        guard let position = subscribers.position(of: subscriberId) else { return }
        subscribers.values[position].link.measured(deliveryBytesPerSecond: deliveryBytesPerSecond, pendingBytes: pendingBytes, now: now)
        note(at: position)
    }

    /// Evicts those that have taken nothing for ``RouterLimits/stallSeconds``, serves keyframe requests that
    /// waited for their allowance, restarts those whose ceiling has passed, releases held frames, and sends a
    /// keyframe request the throttle held back.
    mutating func tick(now: Double, counters: inout RouterCounters) -> [Action] {
        var actions: [Action] = []
        for subscriberId in subscribers.ids {
            guard let position = subscribers.position(of: subscriberId) else { continue }
            if subscribers.values[position].link.hasStalled(now: now, for: limits.stallSeconds) {
                counters.evictedSubscribers += 1
                unsubscribe(subscriberId)
                actions.append(.evict(subscriberId, reason: "it took none of the media queued for it for \(Int(limits.stallSeconds)) s"))
            } else if subscribers.values[position].requests.takeWaiting(now: now) {
                actions += serveKeyframeRequest(subscriberId, now: now, counters: &counters)
            } else if subscribers.values[position].needsRestart {
                actions += restart(subscriberId, now: now, cause: .subscriberBehind, counters: &counters)
            } else if subscribers.values[position].held != nil {
                actions += releaseHeld(subscriberId, now: now, counters: &counters)
            }
            if let position = subscribers.position(of: subscriberId) { note(at: position) }
        }
        if let cause = keyframes.pending { actions += requestKeyframe(now: now, cause: cause, counters: &counters) }
        return actions
    }

    /// A subscriber's own keyframe request, within its allowance: served as a skipped subscriber is, from the
    /// cache when that is cheap, else by a keyframe under the stream's ceiling.
    mutating func serveKeyframeRequest(_ subscriberId: String, now: Double, counters: inout RouterCounters) -> [Action] {
        guard let position = subscribers.position(of: subscriberId) else { return [] }
        subscribers.values[position].waitingForKeyframe = true
        subscribers.values[position].needsRestart = true
        let actions = restart(subscriberId, now: now, cause: .subscriberAsked, counters: &counters)
        note(at: position)
        return actions
    }

    /// Starts a subscriber that skipped again, once it has drained and its own ceiling allows: from the cached
    /// pictures of its layers when they cost it less than ``catchUpInKeyframes`` keyframes and would reach it
    /// sooner than a fresh picture (``CatchUpPlan``), else with a requested keyframe.
    mutating func restart(_ subscriberId: String, now: Double, cause: KeyframeCause, counters: inout RouterCounters) -> [Action] {
        // Checked where it is: this runs at every delivery, and a copy of the subscription costs more than the check.
        guard let position = subscribers.position(of: subscriberId), subscribers.values[position].needsRestart,
            subscribers.values[position].link.inFlight.isEmpty,
            now - subscribers.values[position].restartKeyframeAskedAt >= limits.subscriberKeyframeIntervalSeconds
        else { return [] }
        var subscription = subscribers.values[position]
        if let plan = catchUpPlan(for: subscription, now: now, cause: cause) {
            var actions: [Action] = []
            for (step, index) in plan.indices.enumerated() {
                let cached = cache.entries[index]
                actions.append(send(
                    cached.frame, bytes: cached.bytes, to: subscriberId, &subscription, now: now, arrival: cached.arrival,
                    clears: cached.layer != 0, catchUp: step < plan.indices.count - 1))
            }
            if plan.continues { counters.catchUpsContinued += 1 } else { counters.catchUpsFromKeyframe += 1 }
            subscription.waitingForKeyframe = false
            subscription.needsRestart = false
            subscription.requests.satisfied()
            actions += announce(subscriberId, &subscription)
            note(subscriberId, &subscription)
            subscribers.values[position] = subscription
            return actions
        }
        subscribers.values[position].restartKeyframeAskedAt = now
        return requestKeyframe(now: now, cause: cause, counters: &counters)
    }

    /// A catch-up costs a subscriber at most this many keyframes' bytes.
    static var catchUpInKeyframes: Int { 2 }

    /// The cached pictures that would bring a subscriber to the newest picture sooner than a fresh keyframe would
    /// reach it — that comes with the next keyframe the stream's ceiling allows (at the publisher's next frame at
    /// best), then takes its time on this link — or nil.
    private func catchUpPlan(for subscription: RoutedSubscription<Frame>, now: Double, cause: KeyframeCause) -> CatchUpPlan? {
        guard let keyframe = cache.keyframe else { return nil }
        let rate = subscription.link.kernelRateLow ?? subscription.link.drainRate
        let keyframeSeconds = max(0, keyframes.subscriberCeilingEnds - now) + (cadence.frameInterval ?? 0) + (rate.map { Double(keyframe.bytes) / $0 } ?? 0)
        return CatchUpPlan.make(
            cache: cache.planEntries,
            // A subscriber that asked itself (its decoder failed) holds nothing to go on from: the whole group.
            highestLayer: subscription.layers.effective(topLayer: cadence.topLayer),
            lastSent: cause == .subscriberAsked ? nil : subscription.lastSent,
            maximumBytes: min(Self.catchUpInKeyframes * keyframe.bytes, limits.maximumQueuedBytes), bytesPerSecond: rate,
            freshPictureMilliseconds: keyframeSeconds * 1000)
    }

    /// Sends a subscriber the frame it holds once its link has room for it in time (``fits(_:_:queued:now:)``): a
    /// thinned subscriber's link, idle after a layer-0 frame, carries the newest picture there is instead of
    /// nothing until the next layer-0 frame.
    mutating func releaseHeld(_ subscriberId: String, now: Double, counters: inout RouterCounters) -> [Action] {
        guard let position = subscribers.position(of: subscriberId), subscribers.values[position].held != nil else { return [] }
        var subscription = subscribers.values[position]
        guard let held = subscription.held, !subscription.waitingForKeyframe,
            // Nothing older than what it was sent since (a catch-up) goes to be shown.
            subscription.lastSent.map({ held.arrival > $0 }) ?? false,
            fits(held.bytes, subscription.link, queued: subscription.link.queuedMilliseconds(now: now), now: now)
        else { return [] }
        subscription.held = nil
        counters.fittedInFrames += 1
        let action = send(held.frame, bytes: held.bytes, to: subscriberId, &subscription, now: now, arrival: held.arrival, fittedIn: true)
        note(subscriberId, &subscription)
        subscribers.values[position] = subscription
        return [action]
    }

    /// Asks the publisher for a keyframe, or holds the request back for the throttle (``KeyframeThrottle``).
    mutating func requestKeyframe(now: Double, cause: KeyframeCause, counters: inout RouterCounters) -> [Action] {
        guard keyframes.request(cause, now: now) else { return [] }
        counters.keyframeRequestsSent += 1
        counters.keyframeRequestsByCause[cause, default: 0] += 1
        return [.sendControl(.requestKeyframe(streamId: streamId), to: info.connectionId)]
    }

    /// The rate a subscriber's socket is to be paced at for this stream (see ``StreamRouter/pacingRate(for:)``):
    /// nil when it gets every layer and is not to be restarted, or its link has not been measured.
    func pacingRate(for subscriberId: String) -> Double? {
        guard let subscription = subscribers[subscriberId],
            subscription.layers.highest < cadence.topLayer || subscription.needsRestart, let rate = subscription.link.kernelRate
        else { return nil }
        return StreamRouter<Frame>.pacingHeadroom * rate
    }
}
