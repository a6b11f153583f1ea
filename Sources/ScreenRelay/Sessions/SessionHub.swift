import Foundation
import ScreenTransport
import Hummingbird
import Logging
import ScreenMedia
import ScreenWire

/// One session: its ``StreamRouter`` and the outgoing queues of its connections, behind an actor so that
/// every event is applied in order. Frames are forwarded as the same `ByteBuffer` (reference-counted, never
/// copied); each connection's writer drains its own queue, so a slow socket only fills its own queue, whose
/// media part the router bounds.
actor SessionHub {
    let sessionId: String
    /// What the session is called, given when it was made (`POST /session` `title`); "" for none.
    let title: String
    let createdAt: Date
    private var router: StreamRouter<ByteBuffer>
    private var outlets: [String: ConnectionOutlet] = [:]
    private let metrics: RelayMetrics
    /// The router's counters when last folded into the metrics.
    private var reportedCounters = RouterCounters()
    private var reportedLayers: [Int?: Int] = [:]
    /// What each publisher last reported of its uplink, by stream.
    private var reportedUplinks: [UInt32: (target: Int, estimate: Int)] = [:]
    private var ticks = 0
    /// What the connections' writers wrote out, and the array the last take emptied (its capacity kept).
    private nonisolated let deliveries = DeliveryInbox()
    private var takenDeliveries: [DeliveryInbox.Delivery] = []
    /// Its subscribers' sockets: sampled for the router, paced as it says.
    private var links = SubscriberLinks()
    private var reportedStreams = 0
    /// The recording in progress, if any, and its end once the session has had no stream for a grace period.
    private var recording: SessionRecording
    var recorder: ArchiveRecorder? { recording.recorder }
    /// Since when no client is connected (a new session has none yet); nil while one is.
    private var emptySince: ContinuousClock.Instant? = .now
    /// Live HLS of the session's screen stream while someone requests it (or it is written out).
    private var liveHLS: SessionHLS
    var hls: HLSPackager? { liveHLS.packager }
    /// The stream the router was told HLS reads the rendition of (``keepHLSRendition()``).
    private var hlsReadsRenditionOf: UInt32?

    init(
        sessionId: String, title: String = "", createdAt: Date = Date(), metrics: RelayMetrics, limits: StreamRouter<ByteBuffer>.Limits = .init(),
        publishersMaySignal: Bool = true, archiveGrace: Duration = .seconds(10), alwaysHLS: HLSPackager.Configuration? = nil
    ) {
        self.sessionId = sessionId
        self.title = title
        self.createdAt = createdAt
        recording = SessionRecording(grace: archiveGrace)
        liveHLS = SessionHLS(alwaysOn: alwaysHLS)
        self.router = StreamRouter(sessionId: sessionId, limits: limits, publishersMaySignal: publishersMaySignal)
        self.metrics = metrics
    }

    var isEmpty: Bool { router.isEmpty }

    /// What `GET /session` tells about it: who is there, what is published and watched, whether it is recorded.
    var summary: SessionSummary {
        let connections = router.connectionInfos
        func count(_ role: Role) -> Int { connections.filter { $0.role == role }.count }
        return SessionSummary(
            sessionId: sessionId, title: title, createdAt: createdAt, publishers: count(.publisher), viewers: count(.subscriber),
            moderators: count(.moderator),
            streams: router.streamInfos.map { stream in
                SessionSummary.Stream(
                    streamId: stream.streamId, name: stream.name, videoType: stream.properties.videoType.rawValue,
                    codec: stream.properties.codec.rawValue, width: stream.properties.width, height: stream.properties.height,
                    paused: !stream.properties.hasVideo, subscribers: router.subscriberCount(of: stream.streamId))
            },
            recording: recorder.map { SessionSummary.Recording(archiveId: $0.archiveId, name: recording.name) })
    }

    /// No client and no recording for `duration`: the session can go.
    func hasBeenIdle(for duration: Duration) -> Bool {
        guard recorder == nil, outlets.isEmpty, let emptySince else { return false }
        return ContinuousClock.now - emptySince >= duration
    }

    /// `token`: the id of the token it joined with (its connections share what the token may do).
    func join(_ connection: ConnectionInfo, token: String? = nil, outlet: ConnectionOutlet) {
        outlets[connection.connectionId] = outlet
        emptySince = nil
        metrics.add(.connections)
        perform(router.connect(connection, token: token, now: Self.now()))
        // A late joiner learns that the session is being recorded, as the others did.
        if let recorder {
            outlet.yield(.control(ControlMessage.archiveStarted(archiveId: recorder.archiveId, name: recording.name).encoded()))
        }
    }

    func leave(_ connectionId: String) {
        guard outlets.removeValue(forKey: connectionId) != nil else { return }
        links.forget(connectionId)
        if outlets.isEmpty { emptySince = .now }
        metrics.add(.connections, -1)
        perform(router.disconnect(connectionId, now: Self.now()))
        noteStreams()
    }

    func control(_ message: ControlMessage, from connectionId: String) {
        if case .signal = message { metrics.add(.signals) }
        if case .streamPropertyChanged(let streamId, let properties) = message, let before = router.streamInfo(streamId),
            before.connectionId == connectionId, before.properties.hasVideo != properties.hasVideo
        {
            liveHLS.streamPaused(streamId, paused: !properties.hasVideo)
        }
        if case .uplink(let streamId, let target, let estimate) = message, router.streamInfo(streamId)?.connectionId == connectionId {
            reportUplink(streamId, target: target, estimate: estimate ?? 0)
        }
        perform(router.handle(message, from: connectionId, now: Self.now()))
        noteStreams()
    }

    /// A publisher's uplink as `/metrics` shows it (`screenrelay_publisher_target_kbps{stream="session/id"}`);
    /// zeros take the series out.
    private func reportUplink(_ streamId: UInt32, target: Int, estimate: Int) {
        let label = "\(sessionId)/\(streamId)"
        let before = reportedUplinks[streamId] ?? (0, 0)
        metrics.add(.publisherTargetKbps, label, target - before.target)
        metrics.add(.publisherEstimatedKbps, label, estimate - before.estimate)
        reportedUplinks[streamId] = target == 0 && estimate == 0 ? nil : (target, estimate)
    }

    func media(_ buffer: ByteBuffer, header: MediaFrameHeader, from connectionId: String) {
        metrics.add(.framesIn)
        metrics.add(.bytesIn, buffer.readableBytes)
        let (admitted, actions) = router.receive(buffer, header: header, size: buffer.readableBytes, from: connectionId, now: Self.now())
        // A rendition is for the viewers that need it, and HLS's H.264 variant: archives record the stream as published.
        if admitted, let stream = router.streamInfo(header.streamID) {
            if stream.renditionOf == nil {
                recorder?.record(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond, audio: stream.properties.audio)
                if let configuration = liveHLS.startsOnFrame { _ = startHLS(configuration) }
            }
            liveHLS.frame(buffer, header: header, stream: stream, isPublished: { router.streamInfo($0) != nil })
        }
        perform(actions)
    }

    func audio(_ buffer: ByteBuffer, header: AudioFrameHeader, from connectionId: String) {
        metrics.add(.audioFramesIn)
        metrics.add(.bytesIn, buffer.readableBytes)
        let (admitted, actions) = router.receiveAudio(buffer, header: header, from: connectionId, now: Self.now())
        if admitted { recorder?.recordAudio(buffer, header: header) }
        perform(actions)
    }

    // MARK: HLS

    /// The session's HLS packager of a variant (`h264`: the H.264 one), started if it is not running (a player's
    /// first request for its playlist).
    func startHLS(_ configuration: HLSPackager.Configuration, h264: Bool = false) -> HLSPackager {
        let packager = liveHLS.start(
            configuration, h264: h264, label: sessionId, recording: recorder.map { ($0.archiveId, recording.name) },
            hooks: .init(
                requestKeyframe: { [weak self] in Task { await self?.requestHLSKeyframe(h264: h264) } },
                requestRefresh: { [weak self] in Task { await self?.requestHLSRefresh(h264: h264) } },
                onIdle: { [weak self] in Task { await self?.stopHLS(h264: h264) } }))
        keepHLSRendition()
        return packager
    }

    /// The running packager of a variant.
    func hls(h264: Bool) -> HLSPackager? { h264 ? liveHLS.h264 : liveHLS.packager }

    /// A posted marker: a date range in the HLS timeline, now or when HLS starts.
    func mark(_ range: HLSSnapshot.DateRange) { liveHLS.mark(range) }

    /// Stops packaging a variant (nobody has asked for its playlist for a while).
    func stopHLS(h264: Bool = false) {
        liveHLS.stop(h264: h264)
        keepHLSRendition()
    }

    /// The H.264 variant `index.m3u8` lists beside `primary`: where the packaged stream is not H.264 and its
    /// publisher offers an H.264 rendition. As packaged once it runs; before, what it will be.
    func hlsH264Variant(beside primary: HLSPlaylist.Variant) -> HLSPlaylist.Variant? {
        guard let streamId = liveHLS.keyframeStream(among: router.streamInfos), let info = router.streamInfo(streamId),
            info.properties.codec != .h264, router.renditionOffers(of: streamId).offers.contains(.h264)
        else { return nil }
        if let snapshot = liveHLS.h264?.snapshot, snapshot.format.codec == .h264, !snapshot.segments.isEmpty {
            return HLSPlaylist.Variant(snapshot, uri: HLSPlaylist.h264Playlist)
        }
        return .h264(beside: primary, uri: HLSPlaylist.h264Playlist)
    }

    /// The stream's variant as `index.m3u8` lists it while it is not packaged (nobody reads its playlist: a player
    /// that plays only the H.264 variant asks no keyframes of it): what its publisher announced, at the rate its
    /// uplink controller aims at (1 Mbit/s until it says). Nil without a screen stream.
    func hlsAnnouncedVariant() -> HLSPlaylist.Variant? {
        guard let streamId = liveHLS.keyframeStream(among: router.streamInfos), let info = router.streamInfo(streamId) else { return nil }
        let properties = info.properties
        // VP8's MP4 name (`vp08.…`) is not the one WebCodecs knows (`vp8`), which the publisher announced.
        return HLSPlaylist.Variant(
            codecs: properties.codec == .vp8
                ? CodedVideoFormat(codec: .vp8).codecString(width: properties.width, height: properties.height, framesPerSecond: properties.estimatedFramesPerSecond, mp4: true)
                : StreamRouter<ByteBuffer>.codecString(of: info),
            bandwidth: reportedUplinks[streamId].map { $0.target.multipliedReportingOverflow(by: 1000).partialValue } ?? 1_000_000,
            width: properties.width, height: properties.height, framesPerSecond: properties.estimatedFramesPerSecond, uri: "stream.m3u8")
    }

    /// Whether the packaged stream can have an H.264 variant: it is H.264, or its publisher offers the rendition.
    var hlsHasH264: Bool {
        guard let streamId = liveHLS.keyframeStream(among: router.streamInfos), let info = router.streamInfo(streamId) else { return false }
        return info.properties.codec == .h264 || router.renditionOffers(of: streamId).offers.contains(.h264)
    }

    /// Tells the router whose rendition HLS reads: the packaged stream's, while the H.264 variant is packaged (it
    /// then runs as if it had a subscriber, and stops a while after HLS stops reading it).
    private func keepHLSRendition() {
        let reads = liveHLS.h264 == nil ? nil : liveHLS.keyframeStream(among: router.streamInfos)
        guard reads != hlsReadsRenditionOf else { return }
        if let before = hlsReadsRenditionOf { perform(router.hlsReadsRendition(of: before, codec: .h264, false, now: Self.now())) }
        if let reads { perform(router.hlsReadsRendition(of: reads, codec: .h264, true, now: Self.now())) }
        hlsReadsRenditionOf = reads
    }

    /// The stream whose H.264 variant HLS packages: the stream itself when it is H.264, else its rendition.
    private func hlsStream(h264: Bool) -> UInt32? {
        guard let streamId = liveHLS.keyframeStream(among: router.streamInfos) else { return nil }
        guard h264, router.streamInfo(streamId)?.properties.codec != .h264 else { return streamId }
        return router.renditionOffers(of: streamId).running?.streamId
    }

    private func requestHLSKeyframe(h264: Bool) {
        guard let streamId = hlsStream(h264: h264) else { return }
        perform(router.requestKeyframe(forStream: streamId, now: Self.now()))
    }

    private func requestHLSRefresh(h264: Bool) {
        guard let streamId = hlsStream(h264: h264) else { return }
        perform(router.requestRefresh(forStream: streamId))
    }

    // MARK: Archive

    /// Starts handing frames to `recorder`, each stream from its cached pictures (or, without them, a keyframe
    /// asked of its publisher); everyone is told.
    /// `onIdle` runs when the session has had no stream for the grace period (the publisher left).
    func attach(_ recorder: ArchiveRecorder, name: String, onIdle: @escaping @Sendable () async -> Void) {
        recording.attach(recorder, name: name, onIdle: onIdle, streams: router.streamCount)
        let (cached, actions) = router.startingRecording(now: Self.now())
        for (streamId, frames) in cached {
            guard let properties = router.streamInfo(streamId)?.properties else { continue }
            for buffer in frames {
                guard let header = buffer.withUnsafeReadableBytes({ try? MediaFrameHeader.parse($0).header }) else { continue }
                recorder.record(buffer, header: header, framesPerSecond: properties.estimatedFramesPerSecond, audio: properties.audio)
            }
        }
        perform(actions)
        broadcast(.archiveStarted(archiveId: recorder.archiveId, name: name))
        liveHLS.recordingStarted(archiveId: recorder.archiveId, name: name)
    }

    /// Stops handing frames to the recorder; everyone is told how the recording ended.
    func detach(status: String, reason: String) {
        guard let recorder = recording.detach() else { return }
        broadcast(.archiveStopped(archiveId: recorder.archiveId, status: status, reason: reason))
        liveHLS.recordingStopped(archiveId: recorder.archiveId)
    }

    private func broadcast(_ message: ControlMessage) {
        let text = message.encoded()
        for outlet in outlets.values { outlet.yield(.control(text)) }
    }

    /// The session's streams may have changed (a publish, an unpublish, a publisher gone): into the metrics, and
    /// the recording's idle watch.
    private func noteStreams() {
        let streams = router.streamCount
        guard streams != reportedStreams else { return }
        metrics.add(.streams, streams - reportedStreams)
        reportedStreams = streams
        keepHLSRendition()
        for streamId in reportedUplinks.keys where router.streamInfo(streamId) == nil { reportUplink(streamId, target: 0, estimate: 0) }
        recording.streamsChanged(to: streams)
    }

    /// Drops every connection now, with what is queued for it (the relay is stopping and its grace is over).
    func dropEveryone(reason: String) {
        for outlet in outlets.values { outlet.evict(reason: reason) }
    }

    /// A connection's writer wrote out a video or audio frame of `streamId`: noted with its time, and handed to the
    /// router with the others noted meanwhile (``DeliveryInbox``); the writer goes on at once.
    nonisolated func noteDelivery(to connectionId: String, streamId: UInt32, bytes: Int, isAudio: Bool) {
        let delivery = DeliveryInbox.Delivery(connectionId: connectionId, streamId: streamId, bytes: bytes, isAudio: isAudio, at: Self.now())
        if deliveries.note(delivery) { Task { await self.takeDeliveries() } }
    }

    /// The deliveries noted since the last take, in the order they were written out, each at its own time.
    private func takeDeliveries() {
        deliveries.take(swapping: &takenDeliveries)
        var (frames, audioFrames, bytes) = (0, 0, 0)
        var actions: [StreamRouter<ByteBuffer>.Action] = []
        for delivery in takenDeliveries {
            bytes += delivery.bytes
            if delivery.isAudio {
                audioFrames += 1
                router.audioFrameDelivered(to: delivery.connectionId, streamId: delivery.streamId)
            } else {
                frames += 1
                actions += router.frameDelivered(to: delivery.connectionId, streamId: delivery.streamId, now: delivery.at)
            }
        }
        takenDeliveries.removeAll(keepingCapacity: true)
        metrics.add(.framesOut, frames)
        metrics.add(.audioFramesOut, audioFrames)
        metrics.add(.bytesOut, bytes)
        perform(actions)
    }

    /// A signal from the server's HTTP API.
    func serverSignal(_ signal: Signal) throws(WireError) {
        perform(try router.serverSignal(signal))
        metrics.add(.signals)
    }

    func tick() async {
        ticks += 1
        // Every subscriber's link every half second; those the router times closely every tick, before it
        // decides what they get next.
        let everyone = ticks % 5 == 0
        await sampleLinks(everyone ? router.subscriberIds : router.closelyWatchedSubscriberIds, rates: everyone)
        perform(router.tick(now: Self.now()))
        reportLayers()
    }

    /// What the kernel knows of the subscribers' sockets, for the router's view of their links. The delivery
    /// rates only with `rates` (the router smooths them per half-second sample); then their pacing.
    private func sampleLinks(_ subscriberIds: [String], rates: Bool) async {
        let sources = subscriberIds.compactMap { id in outlets[id]?.link.map { (id, $0) } }
        guard !sources.isEmpty else { return }
        let samples = await SubscriberLinks.sample(sources)
        let now = Self.now()
        for (id, sample) in samples {
            router.linkMeasured(id, deliveryBytesPerSecond: rates ? links.rate(of: id, sample, now: now) : nil, pendingBytes: sample.pendingBytes, now: now)
        }
        guard rates else { return }
        for (id, rate) in links.changes(for: samples.map(\.id), rate: { router.pacingRate(for: $0) }) {
            await outlets[id]?.link?.pace(rate)
        }
    }

    /// Subscriptions by the layer they get, into the metrics: on the tick (every 100 ms), not per frame, since it
    /// walks every subscription.
    private func reportLayers() {
        let layers = router.subscribersByLayer
        guard layers != reportedLayers else { return }
        for key in Set(layers.keys).union(reportedLayers.keys) {
            metrics.add(.subscribersByLayer, key.map(String.init) ?? "waiting", layers[key, default: 0] - reportedLayers[key, default: 0])
        }
        reportedLayers = layers
    }

    private func perform(_ actions: [StreamRouter<ByteBuffer>.Action]) {
        for action in actions {
            switch action {
            case .sendFrame(let buffer, let connectionId, let streamId, let clearingLayer, let catchUp):
                // A frame whose flags this subscriber gets otherwise (its layer cleared, its catch-up bit set) goes with
                // the flags it is to have, written over the shared buffer as it goes out: never a copy.
                var flags: MediaFrameHeader.Flags?
                if catchUp || clearingLayer, let own = buffer.frameFlags {
                    flags = (clearingLayer ? own.withoutLayer : own).union(catchUp ? .catchUp : [])
                }
                outlets[connectionId]?.yield(.frame(buffer, streamId: streamId, flags: flags))
            case .discardQueued(let connectionId, let streamId):
                outlets[connectionId]?.discardMedia(of: streamId)
            case .evict(let connectionId, let reason):
                outlets[connectionId]?.evict(reason: reason)
            case .sendAudio(let buffer, let connectionId, let streamId):
                outlets[connectionId]?.yield(.audio(buffer, streamId: streamId))
            case .sendControl(let message, let connectionId):
                outlets[connectionId]?.yield(.control(message.encoded()))
            case .close(let connectionId, let code, let reason):
                metrics.add(.protocolErrors)
                outlets[connectionId]?.yield(.control(ControlMessage.error(code: code, message: reason).encoded()))
                outlets[connectionId]?.yield(.close(code, reason))
            }
        }
        // Counters the router keeps, folded into the relay's metrics as they change.
        metrics.fold(router.counters, since: reportedCounters)
        reportedCounters = router.counters
    }

    private static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
