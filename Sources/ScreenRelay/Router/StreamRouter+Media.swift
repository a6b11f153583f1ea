import ScreenMedia
public import ScreenWire

/// Media through the router: frames admitted to their stream (``FrameAdmission``) and routed to its subscribers
/// (``RoutedStream``), their deliveries, the kernel's measures of the subscribers' links, and the clock.
extension StreamRouter {
    /// A media frame arrived from `connectionId`. `size` is its length in bytes (for the bounds).
    public mutating func frame(
        _ frame: Frame, header: MediaFrameHeader, size: Int, from connectionId: String, now: Double
    ) -> [Action] {
        receive(frame, header: header, size: size, from: connectionId, now: now).actions
    }

    /// ``frame(_:header:size:from:now:)``, saying also whether the frame was admitted to the stream (what is not
    /// goes to no subscriber, recording or HLS stream): its capture time must fit the stream's timeline
    /// (``CaptureTimeline``), and its rate the stream's and its token's.
    public mutating func receive(
        _ frame: Frame, header: MediaFrameHeader, size: Int, from connectionId: String, now: Double
    ) -> (admitted: Bool, actions: [Action]) {
        let streamId = header.streamID
        // Only its fields are read here: a copy of the stream kept while `route` changes it would make the
        // subscriber table copy itself on every frame.
        guard streams[streamId]?.info.connectionId == connectionId else {
            return (false, [.close(connectionId, .notFound, "stream \(streamId) is not yours: publish it first")])
        }
        var actions: [Action] = []
        if streams[streamId]?.acknowledges == true {
            // It arrived, whatever becomes of it: the publisher measures its uplink by these.
            actions.append(.sendControl(
                .ack(streamId: streamId, sequence: header.sequence, receivedAt: (now * 1_000_000).rounded() / 1000), to: connectionId))
        }
        if header.flags.isCatchUp {
            // The relay's own mark for what it sends from its cache: a publisher's frame with it is not live.
            return (false, [.close(connectionId, .malformed, "the catch-up flag is the relay's to set, not a publisher's")])
        }
        if let refusal = admit(header.captureTime, kind: .video, to: streamId, now: now) { return (false, actions + refusal) }
        // A stream keeps the codec it was published in: its subscribers, recordings and HLS configured for it.
        if let published = streams[streamId]?.info.properties.codec, header.codec != published {
            counters.refused[.frameFormat, default: 0] += 1
            return (false, actions + [.sendControl(.error(
                code: .malformed,
                message: "stream \(streamId) is published in \(published.rawValue); a \(header.codec.rawValue) frame is not sent on (publish another stream for another codec)"), to: connectionId)])
        }
        actions += streams[streamId]?.route(frame, header: header, size: size, now: now, counters: &counters) ?? []
        return (true, actions)
    }

    /// An audio frame arrived from `connectionId`: to every subscriber that asked for audio and is not too far
    /// behind (``RoutedStream/routeAudio(_:now:counters:)``).
    public mutating func audioFrame(_ frame: Frame, header: AudioFrameHeader, from connectionId: String, now: Double) -> [Action] {
        receiveAudio(frame, header: header, from: connectionId, now: now).actions
    }

    /// ``audioFrame(_:header:from:now:)``, saying also whether the frame was admitted (see ``receive(_:header:size:from:now:)``).
    public mutating func receiveAudio(
        _ frame: Frame, header: AudioFrameHeader, from connectionId: String, now: Double
    ) -> (admitted: Bool, actions: [Action]) {
        let streamId = header.streamID
        guard streams[streamId]?.info.connectionId == connectionId else {
            return (false, [.close(connectionId, .notFound, "stream \(streamId) is not yours: publish it first")])
        }
        if let refusal = admit(header.captureTime, kind: .audio, to: streamId, now: now) { return (false, refusal) }
        var actions = streams[streamId]?.routeAudio(frame, now: now, counters: &counters) ?? []
        // Sound is shared: the subscribers its rendition serves get the stream's own audio frames.
        if let rendition = renditions.rendition(of: streamId)?.streamId {
            actions += streams[rendition]?.routeAudio(frame, now: now, counters: &counters) ?? []
        }
        return (true, actions)
    }

    /// Nil when the frame is admitted; else it is counted, and the publisher told why (once for a run).
    private mutating func admit(_ time: MediaTime, kind: CaptureTimeline.Kind, to streamId: UInt32, now: Double) -> [Action]? {
        guard let publisher = streams[streamId]?.info.connectionId,
            let refusal = streams[streamId]?.admission.admit(time, kind: kind, publisher: publisher, now: now, shares: &shares)
        else { return nil }
        counters.refused[refusal.limit, default: 0] += 1
        guard let explanation = refusal.explanation else { return [] }
        return [.sendControl(.error(code: .malformed, message: "stream \(streamId): " + explanation), to: publisher)]
    }

    /// A frame sent to a subscriber was written out (the transport took it: with the relay's small socket
    /// buffers, about when it left). Measures the subscriber's drain rate; a subscriber that skipped and has now
    /// drained is restarted, and one holding a frame gets it when its link has room.
    public mutating func frameDelivered(to connectionId: String, streamId: UInt32, now: Double) -> [Action] {
        if !unreadSince.isEmpty { unreadSince.removeValue(forKey: connectionId) }
        return streams[streamId]?.delivered(to: connectionId, now: now, counters: &counters) ?? []
    }

    /// An audio frame sent to a subscriber was written out.
    public mutating func audioFrameDelivered(to connectionId: String, streamId: UInt32) {
        streams[streamId]?.audioDelivered(to: connectionId)
    }

    /// What the kernel says of a subscriber's connection (`TCP_INFO`): its delivery rate when it had enough to send
    /// to measure it, and the bytes written but not yet acknowledged by the peer (in the network's queues, below
    /// the relay's). Both count in how much it has queued and how fast it drains.
    public mutating func linkMeasured(_ connectionId: String, deliveryBytesPerSecond: Double?, pendingBytes: Int, now: Double) {
        // Over a copy of the keys: walking `streams.keys` while changing a stream would copy the dictionary, and
        // then the stream's whole subscriber table, at every sample.
        for streamId in Array(streams.keys) {
            streams[streamId]?.linkMeasured(connectionId, deliveryBytesPerSecond: deliveryBytesPerSecond, pendingBytes: pendingBytes, now: now)
        }
    }

    /// Tells the members who joined and left since the last time (``MembershipAnnouncements``).
    mutating func flushMembership(now: Double) -> [Action] {
        guard !membership.isEmpty else { return [] }
        return membership.flush(members: connectionOrder, now: now).map { .sendControl($0.0, to: $0.to) }
    }

    /// The rate a subscriber's socket is to be paced at, in bytes a second, or nil for none: a subscriber thinned
    /// below the stream's top layer, or waiting to be restarted, whose link the kernel has measured, is paced at
    /// ``pacingHeadroom`` times that measure (its largest over its subscriptions). A thin link's bottleneck then
    /// gets a frame about as fast as it drains it; sent at once, a 25 KB frame overflows a queue of a few packets
    /// and half of it goes again (measured on a 250 kbit/s link: 1.3 s a frame where 0.8 s would do). A quarter
    /// over the measure, the kernel's next measures can show a link that widened.
    public func pacingRate(for connectionId: String) -> Double? {
        var fastest: Double?
        for stream in streams.values where stream.subscribers.contains(connectionId) {
            guard let rate = stream.pacingRate(for: connectionId) else { return nil }
            fastest = max(fastest ?? 0, rate)
        }
        return fastest
    }

    /// Sends keyframe requests that were held back by the throttles, restarts subscribers whose own ceiling has
    /// passed, releases held frames, and evicts those that have taken nothing for ``Limits/stallSeconds``. Call
    /// periodically (every ~100 ms).
    public mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        if membership.lastFlush.map({ now - $0 >= Self.announcementSeconds }) ?? true { actions += flushMembership(now: now) }
        for streamId in streams.keys.sorted() {
            actions += streams[streamId]?.tick(now: now, counters: &counters) ?? []
        }
        return actions + tickRenditions(now: now)
    }
}
