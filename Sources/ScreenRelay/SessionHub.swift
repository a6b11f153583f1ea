import Foundation
import ScreenTransport
import Hummingbird
import Logging
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
    /// Its subscribers' sockets: sampled for the router, paced as it says.
    private var links = SubscriberLinks()
    /// The last frame copied with its layer bits cleared, and the copy.
    private var lastCleared: (original: ByteBuffer, copy: ByteBuffer)?
    private var reportedStreams = 0
    /// The recording in progress, if any.
    private(set) var recorder: ArchiveRecorder?
    private var recordingName = ""
    /// Called when the session has had no stream for the archive grace period.
    private var onIdle: (@Sendable () async -> Void)?
    private var idleTimer: Task<Void, Never>?
    private let archiveGrace: Duration
    /// Since when no client is connected (a new session has none yet); nil while one is.
    private var emptySince: ContinuousClock.Instant? = .now
    /// Live HLS of the session's screen stream while someone requests it (or it is written out), and the stream.
    private(set) var hls: HLSPackager?
    private var hlsStreamId: UInt32?
    private var pauses = 0
    /// HLS written out (`--hls-dir`): packaged from the first frame, whether or not anyone asks.
    private let alwaysHLS: HLSPackager.Configuration?
    /// Markers posted lately, for an HLS timeline that starts after them (the window keeps what it covers).
    private var markers: [HLSPackager.DateRange] = []

    init(
        sessionId: String, title: String = "", createdAt: Date = Date(), metrics: RelayMetrics, limits: StreamRouter<ByteBuffer>.Limits = .init(),
        publishersMaySignal: Bool = true, archiveGrace: Duration = .seconds(10), alwaysHLS: HLSPackager.Configuration? = nil
    ) {
        self.sessionId = sessionId
        self.title = title
        self.createdAt = createdAt
        self.archiveGrace = archiveGrace
        self.alwaysHLS = alwaysHLS
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
            recording: recorder.map { SessionSummary.Recording(archiveId: $0.archiveId, name: recordingName) })
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
        perform(router.connect(connection, token: token))
        // A late joiner learns that the session is being recorded, as the others did.
        if let recorder {
            outlet.yield(.control(ControlMessage.archiveStarted(archiveId: recorder.archiveId, name: recordingName).encoded()))
        }
    }

    func leave(_ connectionId: String) {
        guard outlets.removeValue(forKey: connectionId) != nil else { return }
        links.forget(connectionId)
        if outlets.isEmpty { emptySince = .now }
        metrics.add(.connections, -1)
        perform(router.disconnect(connectionId))
    }

    func control(_ message: ControlMessage, from connectionId: String) {
        if case .signal = message { metrics.add(.signals) }
        if case .streamPropertyChanged(let streamId, let properties) = message, let hls, streamId == hlsStreamId,
            let before = router.streamInfo(streamId), before.connectionId == connectionId, before.properties.hasVideo != properties.hasVideo
        {
            // The presenter paused or resumed (`screenpub pause`): a date range in the HLS timeline.
            if properties.hasVideo {
                hls.endDateRange(id: "pause-\(pauses)", at: .now())
            } else {
                pauses += 1
                hls.dateRange(.init(id: "pause-\(pauses)", className: HLSDateRangeClass.pause, start: .now()))
            }
        }
        if case .uplink(let streamId, let target, let estimate) = message, router.streamInfo(streamId)?.connectionId == connectionId {
            reportUplink(streamId, target: target, estimate: estimate ?? 0)
        }
        perform(router.handle(message, from: connectionId, now: Self.now()))
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
        if admitted, let stream = router.streamInfo(header.streamID) {
            recorder?.record(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond, audio: stream.properties.audio)
            if hls == nil, let alwaysHLS { _ = startHLS(alwaysHLS) }
            if let hls {
                // HLS follows the session's screen stream: the first published, or the next when it ends.
                if hlsStreamId.flatMap({ router.streamInfo($0) }) == nil, stream.properties.videoType == .screen { hlsStreamId = header.streamID }
                if header.streamID == hlsStreamId { hls.frame(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond) }
            }
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

    /// The session's HLS packager, started if it is not running (a player's first request).
    func startHLS(_ configuration: HLSPackager.Configuration) -> HLSPackager {
        if let hls { return hls }
        let packager = HLSPackager(
            configuration: configuration, label: sessionId,
            requestKeyframe: { [weak self] in Task { await self?.requestHLSKeyframe() } },
            onIdle: { [weak self] in Task { await self?.stopHLS() } })
        hls = packager
        hlsStreamId = nil
        if let recorder {
            packager.dateRange(.init(
                id: "archive-\(recorder.archiveId)", className: HLSDateRangeClass.archive, start: .now(),
                attributes: ["X-NAME": HLSPlaylist.quoted(recordingName)]))
        }
        for marker in markers { packager.dateRange(marker) }
        return packager
    }

    /// A posted marker: a date range in the HLS timeline, now or when HLS starts.
    func mark(_ range: HLSPackager.DateRange) {
        markers.append(range)
        if markers.count > 32 { markers.removeFirst() }
        hls?.dateRange(range)
    }

    /// Stops packaging (nobody has asked for the playlist for a while).
    func stopHLS() {
        hls?.stop()
        hls = nil
        hlsStreamId = nil
    }

    private func requestHLSKeyframe() {
        let streamId = hlsStreamId ?? router.streamInfos.first(where: { $0.properties.videoType == .screen })?.streamId
        guard let streamId else { return }
        perform(router.requestKeyframe(forStream: streamId, now: Self.now()))
    }

    // MARK: Archive

    /// Starts handing frames to `recorder`, each stream from its cached pictures (or, without them, a keyframe
    /// asked of its publisher); everyone is told.
    /// `onIdle` runs when the session has had no stream for the grace period (the publisher left).
    func attach(_ recorder: ArchiveRecorder, name: String, onIdle: @escaping @Sendable () async -> Void) {
        self.recorder = recorder
        self.recordingName = name
        self.onIdle = onIdle
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
        hls?.dateRange(.init(
            id: "archive-\(recorder.archiveId)", className: HLSDateRangeClass.archive, start: .now(),
            attributes: ["X-NAME": HLSPlaylist.quoted(name)]))
        watchIdleness()
    }

    /// Stops handing frames to the recorder; everyone is told how the recording ended.
    func detach(status: String, reason: String) {
        guard let recorder else { return }
        self.recorder = nil
        onIdle = nil
        idleTimer?.cancel()
        idleTimer = nil
        broadcast(.archiveStopped(archiveId: recorder.archiveId, status: status, reason: reason))
        hls?.endDateRange(id: "archive-\(recorder.archiveId)", at: .now())
    }

    private func broadcast(_ message: ControlMessage) {
        let text = message.encoded()
        for outlet in outlets.values { outlet.yield(.control(text)) }
    }

    /// While recording: no stream for the grace period → `onIdle`; a stream (again) cancels the countdown.
    private func watchIdleness() {
        guard let onIdle else { return }
        if router.streamCount == 0 {
            guard idleTimer == nil else { return }
            let grace = archiveGrace
            idleTimer = Task {
                try? await Task.sleep(for: grace)
                if !Task.isCancelled { await onIdle() }
            }
        } else {
            idleTimer?.cancel()
            idleTimer = nil
        }
    }

    /// Drops every connection now, with what is queued for it (the relay is stopping and its grace is over).
    func dropEveryone(reason: String) {
        for outlet in outlets.values { outlet.evict(reason: reason) }
    }

    func delivered(to connectionId: String, streamId: UInt32, bytes: Int) {
        metrics.add(.framesOut)
        metrics.add(.bytesOut, bytes)
        perform(router.frameDelivered(to: connectionId, streamId: streamId, now: Self.now()))
    }

    func audioDelivered(to connectionId: String, streamId: UInt32, bytes: Int) {
        metrics.add(.audioFramesOut)
        metrics.add(.bytesOut, bytes)
        router.audioFrameDelivered(to: connectionId, streamId: streamId)
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
            router.linkMeasured(id, deliveryBytesPerSecond: rates ? sample.deliveryBytesPerSecond : nil, pendingBytes: sample.pendingBytes, now: now)
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
                // A catch-up frame is copied with its flag set (only a catch-up's frames are, never the live ones).
                let sent = catchUp
                    ? buffer.rewritingFrameFlags { (clearingLayer ? $0.withoutLayer : $0).union(.catchUp) }
                    : clearingLayer ? withoutLayer(buffer) : buffer
                outlets[connectionId]?.yield(.frame(sent, streamId: streamId))
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
        let streams = router.streamCount
        for streamId in reportedUplinks.keys where router.streamInfo(streamId) == nil { reportUplink(streamId, target: 0, estimate: 0) }
        metrics.add(.streams, streams - reportedStreams)
        if streams != reportedStreams { watchIdleness() }
        reportedStreams = streams
    }

    /// The frame with its layer bits cleared, for subscribers from before protocol 3: one copy per frame,
    /// whatever the number of such subscribers.
    private func withoutLayer(_ buffer: ByteBuffer) -> ByteBuffer {
        // The same storage (a frame is forwarded as one shared buffer): compared by address, not by its bytes.
        if let cleared = lastCleared, cleared.original.readableBytes == buffer.readableBytes,
            cleared.original.withUnsafeReadableBytes({ $0.baseAddress }) == buffer.withUnsafeReadableBytes({ $0.baseAddress })
        {
            return cleared.copy
        }
        let copy = buffer.rewritingFrameFlags(\.withoutLayer)
        lastCleared = (buffer, copy)
        return copy
    }

    private static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}

/// All sessions of a relay.
actor SessionRegistry {
    private var hubs: [String: SessionHub] = [:]
    private let metrics: RelayMetrics
    private let publishersMaySignal: Bool
    private let archiveGrace: Duration
    private let limits: StreamRouter<ByteBuffer>.Limits
    private let alwaysHLS: HLSPackager.Configuration?

    init(
        metrics: RelayMetrics, limits: StreamRouter<ByteBuffer>.Limits = .init(), publishersMaySignal: Bool = true,
        archiveGrace: Duration = .seconds(10), alwaysHLS: HLSPackager.Configuration? = nil
    ) {
        self.alwaysHLS = alwaysHLS
        self.metrics = metrics
        self.limits = limits
        self.publishersMaySignal = publishersMaySignal
        self.archiveGrace = archiveGrace
    }

    /// A new session, or (`id` given) one the relay knew before a restart.
    func create(id: String = SessionRegistry.newIdentifier(), title: String = "", createdAt: Date = Date()) -> SessionHub {
        let hub = SessionHub(
            sessionId: id, title: title, createdAt: createdAt, metrics: metrics, limits: limits, publishersMaySignal: publishersMaySignal, archiveGrace: archiveGrace,
            alwaysHLS: alwaysHLS)
        hubs[id] = hub
        metrics.set(.sessions, hubs.count)
        return hub
    }

    /// A new session, unless `limit` sessions exist.
    func create(limit: Int, title: String) -> SessionHub? {
        hubs.count < limit ? create(title: title) : nil
    }

    /// Removes the sessions that have had no client and no recording for `duration`; returns their ids.
    func removeIdle(for duration: Duration) async -> [String] {
        var removed: [String] = []
        for (id, hub) in hubs where await hub.hasBeenIdle(for: duration) {
            hubs[id] = nil
            removed.append(id)
        }
        metrics.set(.sessions, hubs.count)
        return removed
    }

    func hub(_ id: String) -> SessionHub? { hubs[id] }

    var all: [SessionHub] { Array(hubs.values) }

    /// Random, URL-safe, unguessable identifiers (128 bits).
    static func newIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max, using: &generator)) }.joined()
    }
}
