import ScreenMedia
import ScreenWire

/// Renditions (protocol 7): a subscriber gets a stream in a codec it decodes, the publisher asked for a second
/// encoding when none of what is sent fits (``RenditionBook``). A rendition is a stream of the router like any
/// other — its own cache, keyframes, layers, pacing and thinning — that is not announced to the session: a
/// subscriber of its primary is told when it is served by it (`renditionChanged`).
extension StreamRouter {
    /// The stream that carries `connectionId`'s subscription to `streamId`: the stream itself or its rendition.
    func servingStream(of connectionId: String, for streamId: UInt32) -> UInt32? {
        if streams[streamId]?.subscribers.contains(connectionId) == true { return streamId }
        if let rendition = renditions.rendition(of: streamId)?.streamId, streams[rendition]?.subscribers.contains(connectionId) == true {
            return rendition
        }
        return nil
    }

    /// Whether `streamId` is a rendition (not announced, not recorded, not packaged for HLS).
    public func isRendition(_ streamId: UInt32) -> Bool { streams[streamId]?.info.renditionOf != nil }

    /// The codec string subscribers match a stream with: the one its publisher announced, or its codec's usual one.
    static func codecString(of info: StreamInfo) -> String {
        info.properties.codecString
            ?? CodedVideoFormat(codec: info.properties.codec).codecString(
                width: info.properties.width, height: info.properties.height, framesPerSecond: info.properties.estimatedFramesPerSecond)
    }

    mutating func subscribe(_ connectionId: String, to streamId: UInt32, _ options: RenditionBook.Waiting, decodes: [String]?, now: Double) -> [Action] {
        guard let stream = streams[streamId], stream.info.renditionOf == nil else {
            return [.sendControl(.error(code: .notFound, message: "there is no stream \(streamId)"), to: connectionId)]
        }
        // Already subscribed, or waiting: nothing to do. Replaying the cached pictures would let one connection make
        // the relay queue them again and again, past the per-subscriber bound.
        guard servingStream(of: connectionId, for: streamId) == nil, !renditions.isWaiting(connectionId, for: streamId) else { return [] }
        let subscribed: [Action] = [.sendControl(.subscribed(streamId: streamId), to: connectionId)]
        guard let decodes, !RenditionBook.decodes(decodes, Self.codecString(of: stream.info)) else {
            return subscribed + join(connectionId, streamId, options, now: now)
        }
        if let rendition = renditions.rendition(of: streamId), let info = streams[rendition.streamId]?.info,
            RenditionBook.decodes(decodes, Self.codecString(of: info))
        {
            return subscribed + join(connectionId, rendition.streamId, options, now: now)
                + [.sendControl(.renditionChanged(streamId: streamId, rendition: info), to: connectionId)]
        }
        if renditions.rendition(of: streamId) == nil,
            let codec = renditions.offers(streamId).first(where: { RenditionBook.decodes(decodes, RenditionBook.expectedCodecString($0)) })
        {
            var waiting = options
            waiting.since = now
            let ask = renditions.wants(streamId, waiting, codec: codec, now: now)
            counters.renditionsAsked += ask ? 1 : 0
            return subscribed + (ask ? [.sendControl(.startRendition(streamId: streamId, codec: codec), to: stream.info.connectionId)] : [])
        }
        // Nothing it decodes: the stream as published, and its page says so.
        return subscribed + join(connectionId, streamId, options, now: now)
    }

    private mutating func join(_ connectionId: String, _ streamId: UInt32, _ options: RenditionBook.Waiting, now: Double) -> [Action] {
        streams[streamId]?.subscribe(
            connectionId, audio: options.audio, layers: options.layers, catchUp: options.catchUp, unreadSince: unreadSince[connectionId],
            now: now, counters: &counters) ?? []
    }

    /// `publishRendition`: the publisher of `streamId` started the rendition it offered; who waits for it joins it.
    mutating func publishRendition(of streamId: UInt32, properties: StreamProperties, from connectionId: String, now: Double) -> [Action] {
        guard let primary = streams[streamId], primary.info.connectionId == connectionId else {
            return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
        }
        if let of = primary.info.renditionOf {
            return [.sendControl(.error(code: .forbidden, message: "stream \(streamId) is a rendition of stream \(of): a rendition has none of its own"), to: connectionId)]
        }
        guard renditions.offers(streamId).contains(properties.codec) else {
            return [.sendControl(.error(code: .forbidden, message: "stream \(streamId) offered no \(properties.codec.rawValue) rendition: say it in publish's renditions"), to: connectionId)]
        }
        guard renditions.rendition(of: streamId) == nil else {
            return [.sendControl(.error(code: .forbidden, message: "stream \(streamId) has its rendition already: a stream has one"), to: connectionId)]
        }
        guard renditions.isAsked(streamId) else {
            return [.sendControl(.error(
                code: .forbidden,
                message: "the relay has not asked for a rendition of stream \(streamId): it asks with startRendition when a viewer needs one"), to: connectionId)]
        }
        let info = StreamInfo(streamId: nextStreamId, connectionId: connectionId, name: primary.info.name, properties: properties, renditionOf: streamId)
        nextStreamId &+= 1
        // No acknowledgements (the primary's measure the uplink) and no discardable layers (openh264's layer-2
        // frames predict from layer-1 ones).
        streams[info.streamId] = RoutedStream(info: info, limits: limits, acknowledges: false, discardableLayers: false)
        var actions: [Action] = [.sendControl(.published(info), to: connectionId)]
        for waiting in renditions.started(info.streamId, of: streamId, codec: properties.codec, now: now) {
            actions += join(waiting.connectionId, info.streamId, waiting, now: now)
            actions.append(.sendControl(.renditionChanged(streamId: streamId, rendition: info), to: waiting.connectionId))
        }
        return actions
    }

    /// A rendition ended: whoever it served waits for the next one (asked at once), or, past the wait, gets the
    /// stream as published.
    mutating func renditionEnded(_ rendition: RoutedStream<Frame>, of streamId: UInt32, now: Double) -> [Action] {
        renditions.ended(rendition: rendition.streamId)
        guard let primary = streams[streamId] else { return [] }
        var actions: [Action] = []
        for connectionId in rendition.subscribers.ids {
            actions.append(.discardQueued(connectionId, streamId: rendition.streamId))
            actions.append(.sendControl(.renditionChanged(streamId: streamId, rendition: nil), to: connectionId))
            let subscription = rendition.subscribers[connectionId]
            let options = RenditionBook.Waiting(
                connectionId: connectionId, audio: subscription?.audio ?? false, layers: subscription?.readsLayers ?? false,
                catchUp: subscription?.readsCatchUp ?? false, since: now)
            if renditions.wants(streamId, options, codec: rendition.info.properties.codec, now: now) {
                counters.renditionsAsked += 1
                actions.append(.sendControl(.startRendition(streamId: streamId, codec: rendition.info.properties.codec), to: primary.info.connectionId))
            }
        }
        return actions
    }

    /// The session's HLS starts or stops reading `codec` of `streamId` as its second variant: while it reads, the
    /// rendition runs (asked for now, and again until it comes) as if it had a subscriber.
    mutating func hlsReadsRendition(of streamId: UInt32, codec: VideoCodec, _ reads: Bool, now: Double) -> [Action] {
        guard let stream = streams[streamId], stream.info.renditionOf == nil, stream.info.properties.codec != codec,
            renditions.hlsReads(streamId, reads, codec: codec, now: now)
        else { return [] }
        counters.renditionsAsked += 1
        return [.sendControl(.startRendition(streamId: streamId, codec: codec), to: stream.info.connectionId)]
    }

    /// The renditions `streamId`'s publisher offered, and the one running (its stream id and codec).
    func renditionOffers(of streamId: UInt32) -> (offers: [VideoCodec], running: (streamId: UInt32, codec: VideoCodec)?) {
        (renditions.offers(streamId), renditions.rendition(of: streamId))
    }

    /// On the clock: subscribers that waited too long get the stream as published; renditions nobody has needed for
    /// ``RenditionBook/lingerSeconds`` are stopped.
    mutating func tickRenditions(now: Double) -> [Action] {
        // The renditions that exist (usually none): nothing is allocated on a tick without them.
        for (rendition, streamId) in renditions.primaryOf {
            renditions.renditionSubscribers(streams[rendition]?.subscribers.count ?? 0, of: streamId, now: now)
        }
        guard renditions.mayExpire(now: now) else { return [] }
        let (waitedTooLong, toStop) = renditions.expired(now: now)
        var actions: [Action] = []
        for (streamId, waiting) in waitedTooLong where streams[streamId] != nil {
            actions += join(waiting.connectionId, streamId, waiting, now: now)
        }
        for (streamId, codec) in renditions.hlsAskDue(now: now) {
            guard let publisher = streams[streamId]?.info.connectionId else { continue }
            counters.renditionsAsked += 1
            actions.append(.sendControl(.startRendition(streamId: streamId, codec: codec), to: publisher))
        }
        for (streamId, codec) in toStop {
            guard let publisher = streams[streamId]?.info.connectionId else { continue }
            counters.renditionsStopped += 1
            actions.append(.sendControl(.stopRendition(streamId: streamId, codec: codec), to: publisher))
        }
        return actions
    }
}
