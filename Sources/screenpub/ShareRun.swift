import ArgumentParser
import Foundation
import Logging
import ScreenCapturePipeWire
import ScreenCaptureX11
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ScreenRelay
import ScreenService
import ScreenSession
import ServiceLifecycle
import Synchronization
import UnixSignals

/// One share from start to stop: the destinations (a relay, started here or given, and/or a file), the capture
/// service, the control socket, SIGHUP reloads and the progress line, in one ServiceLifecycle group.
struct ShareRun {
    let command: ShareCommand
    let logger: Logger

    func run() async throws {
        let logger = self.logger
        let settings = Locked(command.captureSettings)
        let outputPath = command.output
        let overwrite = command.overwrite
        let statistics = PipelineStatistics()
        let started = StartupReport()
        let pause = PauseSwitch()
        let startTime = ContinuousClock.now

        // Where the stream goes: a relay (given, or started here) and/or a file.
        var embeddedRelay: (group: ServiceGroup, task: Task<Void, any Error>)?
        var publisher: RelayPublisher?
        // The session made here (with the embedded relay, or with the secret), printed once the capture has
        // started (not before a display error) and shown by `screenpub status`.
        var session: RelayServer.SessionCreated?
        let fps = command.fps
        if let server = command.server {
            let credentials: (url: String, token: String, session: RelayServer.SessionCreated?)
            do {
                credentials = try await ShareCommand.credentials(server: server, token: command.token)
                session = credentials.session
            } catch {
                logger.error("\(String(describing: error))")
                throw ExitCode(ExitStatus.cannotStart)
            }
            publisher = RelayPublisher(
                transport: WebSocketTransport(url: credentials.url), token: credentials.token, framesPerSecond: fps,
                reconnection: command.reconnect ? RelayPublisher.Reconnection() : .never, logger: logger,
                onSignal: ChatNotifier(logger: logger, notifies: command.notifyChat).receive)
        } else if outputPath == nil {
            do {
                let relay = try await ShareCommand.embeddedRelay(port: command.port, dataDirectory: command.dataDir, logger: logger)
                // Its own group, so that it shuts down gracefully after the capture has finished the stream.
                let relayGroup = ServiceGroup(services: [relay], logger: logger)
                let task = Task { try await relayGroup.run() }
                embeddedRelay = (relayGroup, task)
                session = try await relay.createSession(connectionData: "screenpub")
                // In process: the same protocol without a socket between capture and relay.
                publisher = RelayPublisher(
                    transport: relay.inProcessTransport, token: session!.token, framesPerSecond: fps, logger: logger,
                    onSignal: ChatNotifier(logger: logger, notifies: command.notifyChat).receive)
            } catch {
                logger.error("cannot start the relay on 127.0.0.1:\(command.port): \(String(describing: error))")
                throw ExitCode(ExitStatus.cannotStart)
            }
        }
        let relayPublisher = publisher
        let relaySession = session

        let retry = command.captureRetry > 0
            ? CaptureService.Retry(delay: command.captureRetry) { error in
                // A display, PipeWire or portal that is not there (yet, or any more) may come back; a closed
                // window, a bad region or a user who declined will not.
                if let failure = error as? X11CaptureError {
                    return [.noDisplay, .cannotOpenDisplay, .connectionLost, .captureFailed].contains(failure.kind)
                }
                if error is PipeWireCaptureError { return true }
                if let failure = error as? ScreenCastPortalError { return ![.cancelled, .stopped].contains(failure.kind) }
                return false
            }
            : nil
        let portal = PortalGrant(logger: logger)
        let capture = CaptureService(logger: logger, retry: retry) { [logger, relayPublisher, relaySession] sinks, stop in
            let current = settings.value
            let source: any FrameSource
            let sourceDescription: String
            do {
                (source, sourceDescription) = try makeFrameSource(current.source, portal: portal, stop: stop, logger: logger)
            } catch {
                started.fail(error)
                throw error
            }
            let isFirst = sinks == nil
            var outputs = sinks ?? []
            if isFirst {
                if let outputPath {
                    do {
                        // Fail before capturing if the file cannot be created, not at the first frame.
                        try probeWritable(outputPath, overwrite: overwrite)
                    } catch {
                        started.fail(error)
                        throw error
                    }
                    outputs.append(RecordingSink(path: outputPath, framesPerSecond: current.framesPerSecond))
                }
                if let relayPublisher { outputs.append(relayPublisher) }
            }
            let destinations = [outputPath, relayPublisher?.endpoint].compactMap { $0 }.joined(separator: " and ")
            logger.info(
                "capturing \(sourceDescription) at \(current.framesPerSecond) fps, \(current.encoder.codec) \(current.encoder.bitrateKbps) kbit/s → \(destinations)"
            )
            let pipeline = CapturePipeline(
                configuration: CapturePipeline.Configuration(
                    metadata: current.metadata, keepaliveInterval: current.keepaliveInterval, duration: current.duration,
                    keyframeRequests: relayPublisher?.keyframeRequests, pause: pause),
                encoder: VPXEncoder(configuration: current.encoder), sinks: outputs, stop: stop, statistics: statistics)
            if isFirst {
                started.succeed()
                if let relaySession { printNow(ShareCommand.announcement(relaySession)) }
            }
            return .init(source: source, pipeline: pipeline, sinks: outputs, framesPerSecond: current.framesPerSecond)
        }

        let status = StatusReporter(statistics: statistics, logger: logger, interactive: isatty(STDERR_FILENO) == 1)
        let groupHolder = Locked<ServiceGroup?>(nil)
        let shareControl = ShareControl(
            settings: settings, pause: pause, publisher: relayPublisher, session: relaySession, output: outputPath,
            statistics: statistics, rates: status.rates, startTime: startTime, logger: logger,
            captureIsWaiting: { capture.isWaitingToRetry },
            stopService: { await groupHolder.value?.triggerGracefulShutdown() })

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // First in the list, so shut down last: `screenpub stop` waits for the socket to go, i.e. for the end.
        if let path = command.controlSocket ?? ControlSocket.defaultPath(application: "screenpub", environment: ProcessInfo.processInfo.environment) {
            do {
                services.append(.init(service: try ControlServer(path: path, logger: logger, handle: shareControl.handle)))
            } catch {
                logger.error("\(error)")
                throw ExitCode(ExitStatus.cannotStart)
            }
        }
        if let relayPublisher {
            services.append(.init(service: PublisherService(publisher: relayPublisher), successTerminationBehavior: .ignore))
        }
        services += [
            .init(service: capture, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: status),
            .init(service: ReloadOnHangup(logger: logger) { shareControl.reload(restartCapture: capture.restart) }),
        ]
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                logger: Logger(label: "screenpub.services", factory: { _ in SwiftLogNoOpLogHandler() })))
        groupHolder.withLock { $0 = group }
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await group.run()) } catch { outcome = .failure(error) }
        portal.close()
        if let embeddedRelay {
            await embeddedRelay.group.triggerGracefulShutdown()
            _ = await embeddedRelay.task.result
        }
        if case .failure(let error) = outcome {
            let reason = started.failure ?? error
            status.clearLine()
            logger.error("\(String(describing: reason))")
            if let declined = reason as? ScreenCastPortalError, declined.kind == .cancelled { throw ExitCode(ExitStatus.declined) }
            throw ExitCode(started.didStart ? ExitStatus.runtimeFailure : ExitStatus.cannotStart)
        }
        status.clearLine()
        let totals = statistics.snapshot()
        logger.info(
            "\(destinationsSummary(outputPath, relayPublisher)): \(totals.framesEncoded) frames (\(totals.keyframes) keyframes, \(totals.keepalives) keepalives), \(totals.bytesEncoded) bytes; \(totals.framesCaptured) changed ticks captured, \(totals.framesUnchanged) unchanged ticks skipped, \(totals.missedTicks) ticks missed, \(totals.pausedTicks) paused"
        )
    }
}

/// Makes the capture's frame source on the capture thread; returns it with a description for the log.
func makeFrameSource(
    _ source: CaptureSource, portal: PortalGrant, stop: StopSignal, logger: Logger
) throws -> (any FrameSource, String) {
    switch source {
    case .x11(let options):
        let capture = try XShmFrameSource(options: options, logger: logger)
        let size = capture.size
        return (
            capture,
            "\(describe(options.target)) of \(capture.displayName) (\(size.width)×\(size.height)) with \(capture.usesSharedMemory ? "MIT-SHM" : "XGetImage")"
        )
    case .pipeWireNode(var options):
        if case .fileDescriptor(let inherited) = options.remote {
            // The source takes its descriptor over; a copy keeps the inherited one for later restarts (SIGHUP).
            let copy = fcntl(inherited, F_DUPFD_CLOEXEC, 0)
            guard copy >= 0 else {
                throw PipeWireCaptureError(.noDaemon, "--pipewire-remote \(inherited): \(String(cString: strerror(errno)))")
            }
            options.remote = .fileDescriptor(copy)
        }
        let capture = try PipeWireFrameSource(options: options, logger: logger)
        return (capture, "PipeWire node \(options.nodeID) (\(capture.size.width)×\(capture.size.height))")
    case .portal(let request):
        let capture = try portal.frameSource(request, stop: stop)
        return (capture, "the screen cast granted by the portal, PipeWire node \(capture.options.nodeID) (\(capture.size.width)×\(capture.size.height))")
    }
}

/// The ScreenCast portal's grant for this run: asked for at the first capture, kept across capture
/// restarts (a reload opens a new PipeWire connection on it), asked for again — silently, with the restore
/// token — when its stream has ended, and closed at the end.
final class PortalGrant: Sendable {
    private let session = Locked<ScreenCastPortalSession?>(nil)
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// A PipeWire source on the granted node (on the capture thread: this may wait for the user).
    func frameSource(_ request: ScreenCastPortalRequest, stop: StopSignal) throws -> PipeWireFrameSource {
        if let existing = session.value {
            do {
                return try source(on: existing, request)
            } catch {
                // The screen cast ended (stopped from the desktop, or the compositor restarted): ask again.
                logger.info("the screen cast has ended (\(error)); asking the portal again")
                close()
            }
        }
        let granted = try ScreenCastPortalSession(request, logger: logger, shouldStop: { stop.isStopped })
        session.withLock { $0 = granted }
        return try source(on: granted, request)
    }

    /// Captures the grant's node on a new PipeWire connection from the portal.
    private func source(on grant: ScreenCastPortalSession, _ request: ScreenCastPortalRequest) throws -> PipeWireFrameSource {
        try PipeWireFrameSource(
            options: PipeWireCaptureOptions(
                remote: .fileDescriptor(try grant.openPipeWireRemote()), nodeID: grant.nodeID, drawsCursor: request.cursor != .hidden),
            logger: logger)
    }

    func close() {
        session.withLock { current in
            current?.close()
            current = nil
        }
    }
}

/// Reloads the settings on each SIGHUP until the group shuts down.
struct ReloadOnHangup: Service {
    let logger: Logger
    let reload: @Sendable () -> Void

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                logger.info("SIGHUP: reading the settings again")
                reload()
            }
        }
    }
}

/// What `screenpub status|pause|resume|stop` do to the running share, and its SIGHUP reload.
struct ShareControl: Sendable {
    let settings: Locked<CaptureSettings>
    let pause: PauseSwitch
    let publisher: RelayPublisher?
    let session: RelayServer.SessionCreated?
    let output: String?
    let statistics: PipelineStatistics
    let rates: Locked<StatusReporter.Rates>
    let startTime: ContinuousClock.Instant
    let logger: Logger
    /// The display is gone and the capture waits to try again (`--capture-retry`).
    let captureIsWaiting: @Sendable () -> Bool
    let stopService: @Sendable () async -> Void

    /// Answers one control command.
    func handle(_ command: String) async -> ControlServer.Reply {
        switch command {
        case "status":
            return ControlServer.Reply(json: encode(status()))
        case "pause", "resume":
            let pausing = command == "pause"
            if pause.isPaused != pausing {
                pause.set(paused: pausing)
                publisher?.setVideoEnabled(!pausing)
                logger.info(pausing ? "paused: no video is sent until `screenpub resume`" : "resumed")
            }
            return ControlServer.Reply(json: encode(status()))
        case "stop":
            logger.info("stopping (screenpub stop)")
            var current = status()
            current.state = "stopping"
            return ControlServer.Reply(json: encode(current), afterwards: stopService)
        default:
            return ControlServer.Reply(json: encode(ShareStatus.failure("unknown command '\(command)' (status, pause, resume, stop)")))
        }
    }

    /// Re-reads file, environment and command line; applies what changed to the capture, or says why not.
    func reload(restartCapture: () -> Void) {
        let command: ShareCommand
        do {
            command = try ScreenpubMain.parseShareCommand(commandLine: ScreenpubMain.shareCommandLine)
        } catch {
            logger.error("SIGHUP: the settings were not changed: \(error)")
            return
        }
        let original = ScreenpubMain.startupSettings.value
        for (key, value) in command.startupSettings.sorted(by: { $0.key < $1.key }) where original[key] != value {
            logger.warning("SIGHUP: \(key) changed; it takes effect at the next start")
        }
        var next = command.captureSettings
        // The codec of a running stream (and of a recording) stays; see the warning above.
        next.encoder.codec = settings.value.encoder.codec
        if next.encoder.codec != command.codec { next.encoder.speed = settings.value.encoder.speed }
        guard next != settings.value else {
            logger.info("SIGHUP: the capture settings are unchanged")
            return
        }
        settings.withLock { $0 = next }
        publisher?.setFramesPerSecond(next.framesPerSecond)
        logger.info("SIGHUP: restarting the capture with the new settings (\(next.framesPerSecond) fps, \(next.encoder.bitrateKbps) kbit/s)")
        restartCapture()
    }

    func status() -> ShareStatus {
        let current = settings.value
        let totals = statistics.snapshot()
        let measured = rates.value
        let connection = publisher?.connectionStatus
        let state: String =
            if pause.isPaused { "paused" } else if captureIsWaiting() { "waitingForDisplay" } else if let connection, !connection.connected {
                connection.lastProblem == nil ? "connecting" : "reconnecting"
            } else { "sharing" }
        return ShareStatus(
            ok: true, state: state, pid: Int(getpid()), target: current.source.targetDescription,
            display: current.source.displayDescription,
            relay: publisher?.endpoint, connected: connection?.connected, lastProblem: connection?.lastProblem,
            sessionId: connection?.sessionId ?? session?.sessionId, streamId: connection?.streamId.map(Int.init),
            viewerURL: session?.viewerURL, viewers: connection?.otherConnections, output: output,
            framesPerSecond: current.framesPerSecond, codec: current.encoder.codec.rawValue, bitrateKbps: current.encoder.bitrateKbps,
            measuredFramesPerSecond: measured.encodedPerSecond, measuredKbps: measured.kilobitsPerSecond,
            framesEncoded: totals.framesEncoded, bytesEncoded: totals.bytesEncoded,
            uptimeSeconds: Int((ContinuousClock.now - startTime) / .seconds(1)), error: nil)
    }

    private func encode(_ status: ShareStatus) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(status)) ?? Data(#"{"ok":false}"#.utf8)
    }
}

/// The reply to every control command (docs/protocol.md, "Control socket").
struct ShareStatus: Codable, Sendable {
    var ok: Bool
    /// sharing, paused, waitingForDisplay, connecting, reconnecting, stopping.
    var state: String?
    var pid: Int?
    var target: String?
    var display: String?
    var relay: String?
    var connected: Bool?
    var lastProblem: String?
    var sessionId: String?
    var streamId: Int?
    var viewerURL: String?
    /// Other connections in the relay session (browser viewers, screensub).
    var viewers: Int?
    var output: String?
    var framesPerSecond: Double?
    var codec: String?
    var bitrateKbps: Int?
    /// Encoded frames per second and kbit/s over the last few seconds.
    var measuredFramesPerSecond: Double?
    var measuredKbps: Double?
    var framesEncoded: Int?
    var bytesEncoded: Int?
    var uptimeSeconds: Int?
    var error: String?

    static func failure(_ message: String) -> ShareStatus {
        var status = ShareStatus(ok: false)
        status.error = message
        return status
    }
}
