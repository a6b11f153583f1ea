import Foundation
public import Logging
import ScreenCapturePipeWire
import ScreenCaptureX11
import ScreenCodec
public import ScreenMedia
public import ScreenPipeline
import ScreenService
import ScreenTransport
public import ServiceLifecycle
import UnixSignals

/// One share from start to stop: its destinations (a relay started here or given, files, whatever a URL
/// names), the capture service, the control socket, SIGHUP reloads and the progress line. ``prepare()``
/// makes what can fail before capturing and returns the services for one ServiceGroup, in the order they
/// must start (they stop in reverse: the embedded relay last). ``handle(_:)`` is the control entry point.
public final class Share: Sendable {
    public let configuration: ShareConfiguration
    let logger: Logger
    let sourceFactory: FrameSourceFactory
    let destinationKinds: [DestinationKind]
    let output: @Sendable (String) -> Void
    let statistics = PipelineStatistics()
    let started = StartupReport()
    let pause = PauseSwitch()
    let pictureRequests = PictureRequests()
    /// The second rendition relays ask for while their viewers need it (``renditionCodec(for:)``).
    let renditionRequests = RenditionRequests()
    /// The destinations' say on the encoder's rate and when to hold frames back.
    let pacing = EncoderPacing()
    let control: Locked<ShareControl>
    let destinations = Locked<[any StreamDestination]>([])
    let startTime = ContinuousClock.now
    let reporter: StatusReporter
    /// The reload that SIGHUP asks for: the settings read again.
    let rereadSettings: @Sendable () -> Result<ShareConfiguration, ShareError>
    private let capture: Locked<CaptureService?> = Locked(nil)
    /// The share's sound, when it has any and it could be captured.
    private let audio = Locked<AudioCapture?>(nil)

    /// - Parameters:
    ///   - sources: how frames are captured (the system's X11/PipeWire/portal; a test pattern in tests).
    ///   - destinationKinds: the URL schemes destinations are made from.
    ///   - rereadSettings: reads the settings again on SIGHUP.
    ///   - output: where the session's URLs are printed (standard output).
    public init(
        configuration: ShareConfiguration, logger: Logger, sources: FrameSourceFactory? = nil,
        destinationKinds: [DestinationKind] = ShareDestinations.all, interactive: Bool = false,
        rereadSettings: @escaping @Sendable () -> Result<ShareConfiguration, ShareError> = { .failure(ShareError(.invalidSettings, "nothing to read them from")) },
        output: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.logger = logger
        sourceFactory = sources ?? .system(logger: logger)
        self.destinationKinds = destinationKinds
        self.rereadSettings = rereadSettings
        self.output = output
        control = Locked(ShareControl(configuration: configuration))
        reporter = StatusReporter(statistics: statistics, logger: logger, interactive: interactive)
    }

    /// Makes the destinations (a relay session, a file, the embedded relay) and the control socket, and
    /// returns the services to run in one group, in order. Throws before anything is captured.
    public func prepare() async throws(ShareError) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // Sound first: the destinations announce its channels.
        var sound: AudioCapture?
        if let settings = configuration.audio {
            do {
                sound = try await AudioCapture.start(settings, pause: pause, logger: logger)
            } catch where settings.optional {
                logger.warning("\(error.message); sharing the screen without sound (--audio-optional)")
                control.withLock { $0.audioUnavailable() }
            }
        }
        audio.withLock { $0 = sound }
        let context = DestinationContext(
            pictureRequests: pictureRequests, pacing: pacing, bitrateKbps: configuration.capture.encoder.bitrateKbps,
            framesPerSecond: configuration.capture.framesPerSecond,
            videoCodec: configuration.capture.encoder.codec,
            renditions: Self.renditionCodec(for: configuration.capture.encoder.codec, configuration.rendition).map { (renditionRequests, $0) },
            audio: sound?.properties, audioPreSkip: sound?.preSkip ?? 312,
            options: configuration.destinationOptions, environment: configuration.environment,
            onSignal: ChatNotifier(logger: logger, notifies: configuration.notifyChat, environment: configuration.environment).receive,
            logger: logger)
        var made: [any StreamDestination] = []
        var embeddedRelay: EmbeddedRelay?
        if let embedded = configuration.embeddedRelay {
            let relay = try await EmbeddedRelay(embedded, environment: configuration.environment, logger: logger)
            embeddedRelay = relay
            // First: it stops last, after the stream has ended.
            services.append(.init(service: relay))
            made.append(try await relay.destination(context: context))
        }
        for url in configuration.destinations {
            guard let kind = ShareDestinations.kind(for: url, among: destinationKinds) else {
                throw ShareError(.cannotStart, "\(url): not a destination screenpub knows")
            }
            do {
                made.append(try await kind.make(url, context))
            } catch let error as ShareError {
                throw error
            } catch {
                throw ShareError(.cannotStart, "\(url): \(error)")
            }
        }
        destinations.withLock { $0 = made }
        // Before the capture in the list, so shut down after it: `screenpub stop` waits for the socket to go.
        if let path = configuration.controlSocket {
            do {
                services.append(.init(service: try ControlServer(path: path, logger: logger) { [self] in await controlReply($0) }))
            } catch {
                throw ShareError(.cannotStart, error.description)
            }
        }
        for destination in made {
            services.append(.init(service: DestinationService(destination: destination), successTerminationBehavior: .ignore))
        }
        let capture = makeCaptureService()
        self.capture.withLock { $0 = capture }
        services += [
            .init(service: capture, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: reporter),
            .init(service: StartupAnnouncer(share: self)),
            .init(
                service: ReloadOnHangup(logger: logger, announcement: "SIGHUP: reading the settings again") { [self, embeddedRelay] in
                    reload(rereadSettings())
                    // A renewed certificate serves new viewers; those watching keep their connections.
                    switch embeddedRelay?.reloadCertificate() {
                    case .success(let message)? where configuration.embeddedRelay?.tls != nil: logger.info("\(message)")
                    case .failure(let error)?: logger.error("the TLS certificate stays as it was: \(error.message)")
                    default: break
                    }
                }),
        ]
        return services
    }

    // MARK: Control

    /// Carries out one control command and answers with the status (or the refusal).
    @discardableResult
    public func handle(_ command: ShareControl.Command) -> ShareStatus {
        let (reply, stops) = perform(command)
        if stops { capture.value?.stop() }
        return reply
    }

    /// Carries out a command's effects but the share's end, which it returns for the caller to do once it
    /// has answered (the control socket replies before the share goes).
    private func perform(_ command: ShareControl.Command) -> (reply: ShareStatus, stops: Bool) {
        let effects = control.withLock { $0.handle(command) }
        var reply: ShareStatus?
        var stops = false
        for effect in effects {
            switch effect {
            case .setPaused(let paused): pause.set(paused: paused)
            case .setMuted(let muted): audio.value?.mute.set(muted: muted)
            case .announce(let announcement): for destination in destinations.value { destination.announce(announcement) }
            case .restartCapture: capture.value?.restart()
            case .stopShare: stops = true
            case .log(.info, let message): logger.info("\(message)")
            case .log(.warning, let message): logger.warning("\(message)")
            case .log(.error, let message): logger.error("\(message)")
            case .reply(.status): reply = status
            case .reply(.refused(let message)): reply = .failure(message)
            }
        }
        return (reply ?? status, stops)
    }

    /// Applies settings read again (SIGHUP): what can change at once does, the rest is logged.
    public func reload(_ settings: Result<ShareConfiguration, ShareError>) {
        handle(.reload(settings))
    }

    private func controlReply(_ command: String) async -> ControlServer.Reply {
        let (status, stops) = perform(ShareControl.Command(command))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ControlServer.Reply(
            json: (try? encoder.encode(status)) ?? Data(#"{"ok":false}"#.utf8),
            afterwards: stops ? { @Sendable [capture] in capture.value?.stop() } : nil)
    }

    /// The share now, as `screenpub status` shows it.
    public var status: ShareStatus {
        let control = self.control.value
        let current = control.capture
        let totals = statistics.snapshot()
        let rates = reporter.rates.value
        let all = destinations.value.map(\.status)
        let relay = all.first { $0.kind == .relay }
        var status = ShareStatus(ok: true)
        status.state =
            switch control.state {
            case .stopping: "stopping"
            case .paused: "paused"
            case .sharing where capture.value?.isWaitingToRetry == true: "waitingForDisplay"
            case .sharing where relay?.connected == false: relay?.lastProblem == nil ? "connecting" : "reconnecting"
            case .sharing: "sharing"
            }
        status.pid = Int(getpid())
        status.target = current.source.targetDescription
        status.display = current.source.displayDescription(environment: configuration.environment)
        status.relay = relay?.endpoint
        status.connected = relay?.connected
        status.lastProblem = relay?.lastProblem
        status.sessionId = relay?.sessionId
        status.streamId = relay?.streamId
        status.viewerURL = relay?.viewerURL
        status.viewers = relay?.viewers
        status.output = all.first { $0.kind == .file }?.endpoint
        status.destinations = all
        status.framesPerSecond = current.framesPerSecond
        status.codec = current.encoder.codec.rawValue
        status.chroma = statistics.snapshot().chroma?.rawValue
        if let sound = audio.value {
            let counts = sound.statistics.snapshot()
            status.audio = sound.settings.input.description
            status.muted = control.muted
            status.audioFramesSent = counts.framesSent
            status.audioBytesSent = counts.bytesSent
            status.audioCaptureDelayMilliseconds = sound.captureLatencyMilliseconds
        }
        status.bitrateKbps = current.encoder.bitrateKbps
        // The network's say on the rate: the most cautious destination that adapts (the encoder follows it).
        let adaptive = all.compactMap { destination in destination.targetKbps.map { (target: $0, destination: destination) } }
        if let (target, adaptive) = adaptive.min(by: { $0.target < $1.target }) {
            status.targetKbps = target
            status.rateReason = adaptive.rateReason.map { reason in adaptive.uplinkKbps.map { "\(reason); uplink measured at \($0) kbit/s" } ?? reason }
        }
        status.framesHeld = totals.framesHeld
        status.encodeStride = totals.encodeStride
        status.framesDropped = all.compactMap(\.framesDropped).reduce(0, +)
        let mask = current.source.mask
        if !mask.isEmpty {
            status.maskWindows = mask.windowPatterns.map(\.text)
            status.maskRegions = mask.regions.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }
            status.maskStyle = mask.style.rawValue
            status.windowsCovered = totals.windowsCovered
        }
        status.measuredFramesPerSecond = rates.encodedPerSecond
        status.measuredKbps = rates.kilobitsPerSecond
        status.framesEncoded = totals.framesEncoded
        status.bytesEncoded = totals.bytesEncoded
        status.uptimeSeconds = Int((ContinuousClock.now - startTime) / .seconds(1))
        return status
    }

    /// Counters of the frames captured, skipped and sent so far.
    public var totals: PipelineStatistics.Snapshot { statistics.snapshot() }

    /// Runs the share in one ServiceGroup, stopped gracefully by SIGTERM or SIGINT, and says how it ended: nil,
    /// or the failure to report (``ExitStatus/of(_:)`` says the exit code).
    public func runUntilStopped() async -> ShareError? {
        var failure: (any Error)?
        do {
            let services = try await prepare()
            let group = ServiceGroup(
                configuration: .init(
                    services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: Logger(label: "screenpub.services", factory: { _ in SwiftLogNoOpLogHandler() })))
            try await group.run()
        } catch {
            failure = error
        }
        return finish(failure)
    }

    // MARK: End

    /// What the share's group ending with `error` (nil: it finished) means: nil, or the failure to report.
    /// Closes the portal's grant and clears the progress line.
    public func finish(_ error: (any Error)?) -> ShareError? {
        sourceFactory.close()
        audio.value?.stopCapturing()
        reporter.clearLine()
        // What was written and sent, also when the capture failed: the destinations are finished either way,
        // and a file then holds everything up to the failure.
        // A connection that was never made got nothing: the share did not do what it was asked, even if it ran its course.
        let statuses = destinations.value.map(\.status)
        let unreached = statuses.filter { $0.everConnected == false && $0.lastProblem != nil }
        if started.didStart {
            let totals = statistics.snapshot()
            let places = statuses.map { status in
                status.kind == .file
                    ? "wrote \(status.endpoint)"
                    : status.everConnected == false ? "never reached \(status.endpoint)" : "published to \(status.endpoint)"
            }
            logger.info(
                "\(places.joined(separator: " and ")): \(totals.framesEncoded) frames (\(totals.keyframes) keyframes, \(totals.refinements) refinements, \(totals.keepalives) keepalives), \(totals.bytesEncoded) bytes; \(totals.framesCaptured) changed ticks captured, \(totals.framesUnchanged) unchanged ticks skipped, \(totals.missedTicks) ticks missed, \(totals.pausedTicks) paused"
            )
        }
        guard let error else {
            guard let missed = unreached.first, unreached.count == statuses.count else { return nil }
            return ShareError(
                .failed,
                "nothing was published: \(missed.endpoint) was never reached (\(missed.lastProblem ?? "no connection")); check the address (--server, --publish) and that the server runs there")
        }
        let reason = started.failure ?? error
        if let failure = reason as? ShareError { return failure }
        if let portal = reason as? ScreenCastPortalError, portal.kind == .cancelled { return ShareError(.declined, portal.message) }
        // Like an option that names nothing usable: the command line must change.
        if let x11 = reason as? X11CaptureError, x11.kind == .ambiguousWindow { return ShareError(.invalidSettings, x11.message) }
        return ShareError(started.didStart ? .failed : .cannotStart, String(describing: reason))
    }

    // MARK: Capture

    private func makeCaptureService() -> CaptureService {
        let retry = configuration.captureRetry.map { delay in
            CaptureService.Retry(delay: delay) { ($0 as? any CaptureFailure)?.isTransient ?? false }
        }
        return CaptureService(logger: logger, retry: retry) { [self] sinks, stop in
            let current = control.value.capture
            let isFirst = sinks == nil
            let made: (source: any FrameSource, description: String)
            var outputs = sinks ?? []
            do {
                made = try sourceFactory.make(current.source, stop)
                if isFirst {
                    outputs = try destinations.value.map { try $0.makeSink() }
                    audio.value?.sinks.set(outputs.compactMap { $0 as? any ConcurrentAudioSink })
                }
            } catch {
                started.fail(error)
                throw error
            }
            let automatic = current.codec == .auto ? " (auto)" : ""
            var encoder = current.encoder
            // A stream keeps the chroma format its first keyframe declared, through restarts of the capture.
            if let decided = statistics.snapshot().chroma { (encoder.chroma, encoder.chromaFollowsContent) = (decided, false) }
            let chroma = encoder.chromaFollowsContent ? "4:4:4 if the screen has coloured detail, else 4:2:0" : encoder.chroma.displayName
            logger.info(
                "capturing \(made.description) at \(current.framesPerSecond) fps, \(current.encoder.codec)\(automatic) \(chroma), \(current.encoder.bitrateKbps) kbit/s → \(destinations.value.map(\.endpoint).joined(separator: " and "))"
            )
            let pipeline = CapturePipeline(
                configuration: CapturePipeline.Configuration(
                    metadata: current.metadata, keepaliveInterval: current.keepaliveInterval, duration: current.duration,
                    pictureRequests: pictureRequests, pause: pause, pacing: pacing, framesPerSecond: current.framesPerSecond),
                encoder: makeVideoEncoder(encoder), sinks: outputs, stop: stop, statistics: statistics,
                rendition: makeRenditionEncoding(primary: encoder))
            if isFirst { started.succeed() }
            return .init(source: made.source, pipeline: pipeline, sinks: outputs, framesPerSecond: current.framesPerSecond)
        }
    }

    /// The codec of the second rendition relays may ask for: H.264, which every browser and player decodes, beside
    /// any other codec; none beside H.264 itself, or when `--rendition none` says so.
    static func renditionCodec(for codec: VideoCodec, _ choice: RenditionChoice) -> VideoCodec? {
        choice == .h264 && codec != .h264 ? .h264 : nil
    }

    /// The second rendition's encoder, made when a relay asks for it: the share's settings in 4:2:0 (H.264 has
    /// no other here), its rate a share of the primary's (``RenditionEncoding/rateShare``).
    private func makeRenditionEncoding(primary: VideoEncoderConfiguration) -> RenditionEncoding? {
        let sinks = destinations.value.compactMap { $0.makeRenditionSink() }
        guard !sinks.isEmpty, Self.renditionCodec(for: primary.codec, configuration.rendition) != nil else { return nil }
        return RenditionEncoding(requests: renditionRequests, sinks: sinks) { codec in
            var configuration = primary
            (configuration.codec, configuration.chroma, configuration.chromaFollowsContent) = (codec, .yuv420, false)
            (configuration.speed, configuration.followsNetwork) = (nil, true)
            configuration.bitrateKbps = max(RateControl.lowestKbps, Int(Double(primary.bitrateKbps) * RenditionEncoding.rateShare))
            return makeVideoEncoder(configuration)
        }
    }

    /// Prints the destinations' startup lines (a session's URLs) once capture has started.
    func printStartupMessages() async throws {
        for destination in destinations.value {
            if let message = try await destination.startupMessage() { output(message) }
        }
    }
}

/// Runs a destination's own work as a service. It returns when the capture has finished the destination's
/// sink; the service then waits for the group's shutdown to reach it, as ServiceLifecycle expects.
struct DestinationService: Service {
    let destination: any StreamDestination
    func run() async throws {
        try await destination.run()
        try? await gracefulShutdown()
    }
}

/// Waits for the capture to start, then prints what scripts read (the session's URLs) once.
struct StartupAnnouncer: Service {
    let share: Share
    func run() async throws {
        try await cancelWhenGracefulShutdown {
            guard await share.started.waitUntilStarted() else { return }
            try await share.printStartupMessages()
        }
        try? await gracefulShutdown()
    }
}
