public import ScreenWire

/// What a client's control messages do: publishing, subscribing, signals, keyframe requests; and the relay's own
/// (a recording starts, an HLS segment wants a keyframe, a signal from the HTTP API).
extension StreamRouter {
    /// Handles a control message from a connected client.
    public mutating func handle(_ message: ControlMessage, from connectionId: String, now: Double) -> [Action] {
        guard let connection = connections[connectionId] else {
            return [.close(connectionId, .badState, "say hello first")]
        }
        if let kind = rateKind(of: message, from: connectionId),
            let refusal = rates.admit(kind, connectionId: connectionId, token: shares.token(of: connectionId), now: now)
        {
            counters.refused[kind.limit, default: 0] += 1
            return [.sendControl(.error(code: .rateLimited, message: refusal), to: connectionId)]
        }
        switch message {
        case .publish(let name, let properties, let acks, let discardableLayers, let refreshes, let offers):
            guard connection.role.mayPublish else {
                return [.sendControl(.error(code: .forbidden, message: "a \(connection.role.rawValue) token cannot publish"), to: connectionId)]
            }
            guard name.utf8.count <= limits.maximumStreamNameBytes else {
                counters.refused[.streamName, default: 0] += 1
                return [.sendControl(.error(code: .malformed, message: "a stream name is at most \(limits.maximumStreamNameBytes) bytes"), to: connectionId)]
            }
            guard streamCount < limits.maximumStreamsPerSession else {
                counters.refused[.streamsPerSession, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "this session holds \(limits.maximumStreamsPerSession) streams, the most it may: unpublish one first"), to: connectionId)]
            }
            guard streams.values.count(where: { $0.info.connectionId == connectionId && $0.info.renditionOf == nil }) < limits.maximumStreamsPerConnection else {
                counters.refused[.streamsPerConnection, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "a connection publishes at most \(limits.maximumStreamsPerConnection) streams at once"), to: connectionId)]
            }
            let token = shares.token(of: connectionId)
            guard streams.values.count(where: { $0.info.renditionOf == nil && shares.token(of: $0.info.connectionId) == token }) < limits.tokenShares.streamsPerToken else {
                counters.refused[.streamsPerToken, default: 0] += 1
                return [.sendControl(.error(code: .forbidden, message: "this token's connections publish \(limits.tokenShares.streamsPerToken) streams, the most they may together: unpublish one first"), to: connectionId)]
            }
            let info = StreamInfo(streamId: nextStreamId, connectionId: connectionId, name: name, properties: properties)
            nextStreamId &+= 1
            streams[info.streamId] = RoutedStream(info: info, limits: limits, acknowledges: acks, discardableLayers: discardableLayers, refreshes: refreshes)
            renditions.published(info.streamId, offers: offers.filter { $0 != properties.codec })
            // Who joined is told before the stream it publishes.
            var actions: [Action] = flushMembership(now: now) + [.sendControl(.published(info), to: connectionId)]
            for other in connectionOrder where other != connectionId {
                actions.append(.sendControl(.streamCreated(info), to: other))
            }
            return actions
        case .unpublish(let streamId):
            guard streams[streamId]?.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            return endStream(streamId, reason: "unpublished", now: now)
        case .publishRendition(let streamId, let properties):
            return publishRendition(of: streamId, properties: properties, from: connectionId, now: now)
        case .streamPropertyChanged(let streamId, let properties):
            guard streams[streamId]?.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            guard streams[streamId]?.info.renditionOf == nil else {
                streams[streamId]?.info.properties = properties
                return []
            }
            // Kept, so that late joiners see the stream as it is now (paused, say).
            streams[streamId]?.info.properties = properties
            return connectionOrder.map { .sendControl(.streamPropertyChanged(streamId: streamId, properties: properties), to: $0) }
        case .subscribe(let streamId, let audio, let layers, let catchUp, let decodes):
            let options = RenditionBook.Waiting(connectionId: connectionId, audio: audio, layers: layers, catchUp: catchUp, since: now)
            return subscribe(connectionId, to: streamId, options, decodes: decodes, now: now)
        case .unsubscribe(let streamId):
            if renditions.stopWaiting(connectionId, for: streamId) { return [] }
            guard let serving = servingStream(of: connectionId, for: streamId) else { return [] }
            if let since = streams[serving]?.unsubscribe(connectionId)?.link.stalledSince {
                unreadSince[connectionId] = min(since, unreadSince[connectionId] ?? since)
            }
            return [.discardQueued(connectionId, streamId: serving)]
        case .requestKeyframe(let asked):
            let streamId = servingStream(of: connectionId, for: asked) ?? asked
            guard let position = streams[streamId]?.subscribers.position(of: connectionId),
                let decision = streams[streamId]?.subscribers.values[position].requests.asked(now: now)
            else {
                return [.sendControl(.error(code: .notFound, message: "not subscribed to stream \(streamId)"), to: connectionId)]
            }
            switch decision {
            case .serve:
                return streams[streamId]?.serveKeyframeRequest(connectionId, now: now, counters: &counters) ?? []
            case .wait:
                counters.refused[.keyframeRequests, default: 0] += 1
                return []
            case .close:
                counters.refused[.keyframeRequests, default: 0] += 1
                return [.close(
                    connectionId, .rateLimited,
                    "it asked for keyframes \(limits.ignoredKeyframeRequestsBeforeClose) times over its allowance of \(limits.keyframeRequestsPerSubscriber) per \(Int(limits.keyframeRequestWindowSeconds)) s")]
            }
        case .signal(var signal):
            if connection.role == .publisher && !publishersMaySignal {
                return [.sendControl(.error(code: .forbidden, message: "this relay does not let publisher tokens send signals"), to: connectionId)]
            }
            if let refusal = signals.admit(connectionId, now: now, shares: &shares) {
                counters.refused[.signalRate, default: 0] += 1
                return [.sendControl(.error(code: .invalidSignal, message: refusal), to: connectionId)]
            }
            signal.from = connectionId
            signal.fromData = connection.data
            // Who joined is told before what they say.
            return flushMembership(now: now) + deliver(signal, replyingTo: connectionId)
        case .uplink(let streamId, _, _):
            // What the relay's metrics show (the session hub keeps it); only the stream's publisher may say it.
            guard streams[streamId]?.info.connectionId == connectionId else {
                return [.sendControl(.error(code: .notFound, message: "you publish no stream \(streamId)"), to: connectionId)]
            }
            return []
        case .hello:
            return [.sendControl(.error(code: .badState, message: "hello was already accepted"), to: connectionId)]
        case .welcome, .published, .subscribed, .streamCreated, .streamDestroyed, .connectionCreated,
            .connectionDestroyed, .error, .archiveStarted, .archiveStopped, .ack, .subscriptionChanged, .requestRefresh,
            .renditionChanged, .startRendition, .stopRendition:
            return [.close(connectionId, .unknownMessage, "\(message.type) is sent by the relay, not to it")]
        }
    }

    /// The allowance a message spends, if any: a `subscribe` that subscribes (a repeated one does nothing and spends
    /// nothing), any change of a stream (it is announced). An `unsubscribe` spends nothing and is never refused: it
    /// only gives back (refused, it left the cached group it had been queued with waiting for a client that wanted
    /// none of it), and the `subscribe`s it ends paid already.
    private func rateKind(of message: ControlMessage, from connectionId: String) -> ControlRates.Kind? {
        switch message {
        case .subscribe(let streamId, _, _, _, _):
            streams[streamId] != nil && servingStream(of: connectionId, for: streamId) == nil && !renditions.isWaiting(connectionId, for: streamId)
                ? .subscription : nil
        case .publish, .publishRendition, .unpublish, .streamPropertyChanged: .streamChange
        default: nil
        }
    }

    /// A recording starts: each stream's file must begin at a keyframe. Returns the cached pictures of each stream
    /// that has them (its last keyframe and the frames since, for the file to begin with), and asks the publishers
    /// of the others for a keyframe: starting a recording costs the viewers no keyframe when the cache can start it.
    public mutating func startingRecording(now: Double) -> (cached: [(streamId: UInt32, frames: [Frame])], actions: [Action]) {
        var cached: [(streamId: UInt32, frames: [Frame])] = []
        var actions: [Action] = []
        for streamId in streams.keys.sorted() where !isRendition(streamId) {
            if let cache = streams[streamId]?.cache, !cache.entries.isEmpty {
                cached.append((streamId, cache.entries.map(\.frame)))
            } else {
                actions += streams[streamId]?.requestKeyframe(now: now, cause: .relay, counters: &counters) ?? []
            }
        }
        return (cached, actions)
    }

    /// Asks the publisher of one stream for a keyframe for the relay itself (an HLS segment is due).
    public mutating func requestKeyframe(forStream streamId: UInt32, now: Double) -> [Action] {
        streams[streamId]?.requestKeyframe(now: now, cause: .relay, counters: &counters) ?? []
    }

    /// Asks the publisher of one stream for a frame, any kind, for the relay itself (an HLS part is due on an idle
    /// screen): nothing for a publisher that did not say it answers (`publish` without `refreshes`).
    public func requestRefresh(forStream streamId: UInt32) -> [Action] {
        guard let stream = streams[streamId], stream.refreshes else { return [] }
        return [.sendControl(.requestRefresh(streamId: streamId), to: stream.info.connectionId)]
    }

    /// A stream ends: everyone is told, and its rendition ends with it. A rendition that ends is not announced (it
    /// never was): whoever it served waits for the next (``renditionEnded(_:of:now:)``).
    mutating func endStream(_ streamId: UInt32, reason: String, now: Double) -> [Action] {
        guard let stream = streams.removeValue(forKey: streamId) else { return [] }
        if let primary = stream.info.renditionOf { return renditionEnded(stream, of: primary, now: now) }
        if let rendition = renditions.rendition(of: streamId) { streams[rendition.streamId] = nil }
        renditions.ended(primary: streamId)
        return connectionOrder.map { .sendControl(.streamDestroyed(streamId: streamId, reason: reason), to: $0) }
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
}
