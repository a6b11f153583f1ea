public import ArgumentParser
import Foundation
import Logging
import ScreenCaptureX11
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ScreenRelay
import ScreenSession
import ScreenWire
import ServiceLifecycle
import ScreenService
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Exit codes, documented in `--help` and the README.
enum ExitStatus {
    /// Capture, encoding or writing failed after starting (display lost, window closed, disk full).
    static let runtimeFailure: Int32 = 1
    /// Could not start: no display, unknown window or monitor, region outside the screen, unwritable output.
    static let cannotStart: Int32 = 2
}

@main
struct ScreenpubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenpub",
        abstract: "Share a Linux screen as a low-frame-rate, damage-driven VP9/VP8 screen stream.",
        discussion: """
            Captures the X11 root window (or one monitor, window or region) with MIT-SHM, skips ticks on which \
            nothing changed (XDamage), encodes with libvpx (VP9 screen-content tuning by default) and publishes \
            it as a screen-type stream to screenrelay, and/or records it to a WebM file whose timed metadata \
            track keeps every frame's metadata.

            Where it goes: with --server, to that relay (with --token, or a new session made with the relay \
            secret from $SCREENRELAY_SECRET); with --output, to a file; with neither, to a relay started \
            inside screenpub on 127.0.0.1 (--port), whose session and viewer URLs are printed (its HTTP API takes \
            $SCREENRELAY_SECRET when set, else a random secret).

            Exit status: 0 finished (duration reached, or stopped with SIGINT/SIGTERM: the file is complete); \
            1 capture, encoding or writing failed after starting (what was recorded stays readable); \
            2 could not start (no display, unknown window or monitor, bad region, output not writable or \
            already there without --overwrite); \
            64 invalid command line.
            """,
        version: "0.1.0")

    @Option(help: "Frames per second to capture (at most; unchanged ticks cost almost nothing).")
    var fps: Double = 5

    @Option(help: "X display to capture, e.g. :0 (default: $DISPLAY).")
    var display: String?

    @Option(help: "Capture one RandR monitor, numbered from 0 as in `xrandr --listmonitors`.")
    var monitor: Int?

    @Option(help: "Capture one window by id (decimal or 0x hex, as `xwininfo` prints).")
    var window: String?

    @Option(help: "Capture a rectangle of the screen: X,Y,WIDTH,HEIGHT.")
    var region: String?

    @Option(help: "Video codec: vp9 (screen-content tuning) or vp8.")
    var codec: VideoCodec = .vp9

    @Option(help: "Target bit rate in kbit/s (constant bit rate).")
    var bitrate: Int = 1500

    @Option(
        help: ArgumentHelp(
            "Per-frame metadata: 'time' (ISO-8601 capture time, the default), 'none', or a fixed text of at most 32 bytes.",
            valueName: "TEXT"))
    var metadata: String?

    @Option(help: "Record to this WebM file.")
    var output: String?

    @Option(help: "Publish to the screenrelay at this URL (http://host:port).")
    var server: String?

    @Option(help: "A publisher token for --server (default: make a session with $SCREENRELAY_SECRET).")
    var token: String?

    @Option(help: "Port of the relay started inside screenpub when neither --server nor --output is given (0: any free port).")
    var port: Int = 8090

    @Flag(help: "With --server: exit when the relay cannot be reached or the connection drops, instead of reconnecting with backoff (0.25 s doubling to 15 s, ±20 % jitter).")
    var noReconnect = false

    @Option(help: "Where the embedded relay keeps archives (default: $XDG_STATE_HOME/screenpub/relay-PORT; none with --port 0).")
    var dataDir: String?

    @Flag(help: "Replace the --output file if it exists (otherwise screenpub refuses, to never lose a recording).")
    var overwrite = false

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Re-send the unchanged picture after this many idle seconds; 0: never. Default: 5 when publishing (live viewers see the stream is alive), 0 for a recording only (a gap is idle time).")
    var keepalive: Double?

    @Option(help: "Encoder threads (default: 1; 2 from 15 fps up on a machine with 2 or more cores, which keeps a full-screen change at 1080p30 within the frame interval).")
    var threads: Int?

    @Option(help: "libvpx speed (cpu-used): VP9 5–9 (default 8), VP8 4–16 (default 12); higher is faster, coarser.")
    var speed: Int?

    @Flag(help: "Show incoming chat lines as desktop notifications (notify-send), besides logging them.")
    var notifyChat = false

    @Flag(help: "Do not draw the pointer into the frames.")
    var noCursor = false

    @Flag(help: "Capture with XGetImage even when MIT-SHM is available (for comparison).")
    var noShm = false

    @Option(help: "Log lines on standard error: text (what journald shows as is) or json (one object per line).")
    var logFormat = "text"

    @Flag(name: .shortAndLong, help: "Log more detail.")
    var verbose = false

    func validate() throws {
        guard LogFormat(rawValue: logFormat) != nil else { throw ValidationError("--log-format must be text or json, got '\(logFormat)'") }
        guard fps > 0, fps <= 120 else { throw ValidationError("--fps must be between 0 and 120, got \(fps)") }
        guard bitrate >= 50, bitrate <= 100_000 else {
            throw ValidationError("--bitrate must be between 50 and 100000 kbit/s, got \(bitrate)")
        }
        if let threads, !(1...16).contains(threads) { throw ValidationError("--threads must be between 1 and 16") }
        if let speed {
            let range = codec == .vp9 ? 5...9 : 4...16
            guard range.contains(speed) else {
                throw ValidationError("--speed for \(codec) must be between \(range.lowerBound) and \(range.upperBound)")
            }
        }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if let keepalive, keepalive < 0 { throw ValidationError("--keepalive must not be negative") }
        let targets = [monitor != nil, window != nil, region != nil].filter { $0 }.count
        guard targets <= 1 else { throw ValidationError("give at most one of --monitor, --window and --region") }
        if let region, PixelRect(parsing: region) == nil {
            throw ValidationError("--region must be X,Y,WIDTH,HEIGHT with non-negative numbers, got '\(region)'")
        }
        if let window, parseWindowID(window) == nil {
            throw ValidationError("--window must be a window id in decimal or 0x hex, got '\(window)'")
        }
        do { _ = try MetadataPolicy(option: metadata) } catch { throw ValidationError("--metadata: \(error)") }
        if token != nil && server == nil { throw ValidationError("--token needs --server") }
        if let server, !(server.hasPrefix("http://") || server.hasPrefix("https://")) {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(server)'")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        LogFormat(rawValue: logFormat)?.bootstrap()
        var logger = Logger(label: "screenpub")
        logger.logLevel = verbose ? .debug : .info
        let target: X11CaptureTarget =
            if let monitor { .monitor(monitor) } else if let window { .window(parseWindowID(window)!) } else if let region
        { .region(PixelRect(parsing: region)!) } else { .rootWindow }
        let captureOptions = X11CaptureOptions(
            displayName: display, target: target, drawsCursor: !noCursor, usesSharedMemory: !noShm)
        let encoderConfiguration = VPXEncoderConfiguration(
            codec: codec, bitrateKbps: bitrate, framesPerSecond: fps,
            threads: threads ?? (fps >= 15 && ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1), speed: speed)
        let keepaliveSeconds = keepalive ?? (output != nil && server == nil ? 0 : 5)
        let pipelineConfiguration = CapturePipeline.Configuration(
            metadata: try MetadataPolicy(option: metadata), keepaliveInterval: keepaliveSeconds > 0 ? keepaliveSeconds : nil,
            duration: duration)
        let outputPath = output
        let overwrite = self.overwrite
        let fps = self.fps
        let statistics = PipelineStatistics()
        let started = StartupReport()

        // Where the stream goes: a relay (given, or started here) and/or a file.
        var embeddedRelay: (group: ServiceGroup, task: Task<Void, any Error>)?
        var publisher: RelayPublisher?
        // The embedded relay's URLs, printed once the capture has started (not before a display error).
        var announcement: String?
        if let server {
            let credentials: (url: String, token: String, announcement: String?)
            do {
                credentials = try await Self.credentials(server: server, token: token)
                announcement = credentials.announcement
            } catch {
                logger.error("\(String(describing: error))")
                throw ExitCode(ExitStatus.cannotStart)
            }
            publisher = RelayPublisher(
                transport: WebSocketTransport(url: credentials.url), token: credentials.token, framesPerSecond: fps,
                reconnection: noReconnect ? .never : RelayPublisher.Reconnection(), logger: logger,
                onSignal: ChatNotifier(logger: logger, notifies: notifyChat).receive)
        } else if output == nil {
            do {
                let relay = try await Self.embeddedRelay(port: port, dataDirectory: dataDir, logger: logger)
                // Its own group, so that it shuts down gracefully after the capture has finished the stream.
                let relayGroup = ServiceGroup(services: [relay], logger: logger)
                let task = Task { try await relayGroup.run() }
                embeddedRelay = (relayGroup, task)
                let session = try await relay.createSession(connectionData: "screenpub")
                announcement = Self.announcement(session)
                // In process: the same protocol without a socket between capture and relay.
                publisher = RelayPublisher(
                    transport: relay.inProcessTransport, token: session.token, framesPerSecond: fps, logger: logger,
                    onSignal: ChatNotifier(logger: logger, notifies: notifyChat).receive)
            } catch {
                logger.error("cannot start the relay on 127.0.0.1:\(port): \(String(describing: error))")
                throw ExitCode(ExitStatus.cannotStart)
            }
        }
        let relayPublisher = publisher
        let relayAnnouncement = announcement

        let capture = CaptureService(framesPerSecond: fps, logger: logger) { [logger, relayPublisher, relayAnnouncement] stop in
            let publisher = relayPublisher
            let source: XShmFrameSource
            do {
                source = try XShmFrameSource(options: captureOptions, logger: logger)
            } catch {
                started.fail(error)
                throw error
            }
            var sinks: [any EncodedFrameSink] = []
            if let outputPath {
                do {
                    // Fail before capturing if the file cannot be created, not at the first frame.
                    try probeWritable(outputPath, overwrite: overwrite)
                } catch {
                    started.fail(error)
                    throw error
                }
                sinks.append(RecordingSink(path: outputPath, framesPerSecond: fps))
            }
            if let publisher { sinks.append(publisher) }
            let size = source.size
            let destinations = [outputPath, publisher?.endpoint].compactMap { $0 }.joined(separator: " and ")
            logger.info(
                "capturing \(describe(target)) of \(source.displayName) (\(size.width)×\(size.height)) at \(fps) fps with \(source.usesSharedMemory ? "MIT-SHM" : "XGetImage"), \(encoderConfiguration.codec) \(encoderConfiguration.bitrateKbps) kbit/s → \(destinations)"
            )
            var configuration = pipelineConfiguration
            configuration.keyframeRequests = publisher?.keyframeRequests
            let pipeline = CapturePipeline(
                configuration: configuration, encoder: VPXEncoder(configuration: encoderConfiguration),
                sinks: sinks, stop: stop, statistics: statistics)
            started.succeed()
            if let relayAnnouncement { printNow(relayAnnouncement) }
            return (source, pipeline)
        }
        let status = StatusReporter(statistics: statistics, logger: logger, interactive: isatty(STDERR_FILENO) == 1)
        let group = ServiceGroup(
            configuration: .init(
                services: (publisher.map {
                    [ServiceGroupConfiguration.ServiceConfiguration(service: PublisherService(publisher: $0), successTerminationBehavior: .ignore)]
                } ?? [])
                    + [
                        .init(service: capture, successTerminationBehavior: .gracefullyShutdownGroup),
                        .init(service: status),
                    ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: Logger(label: "screenpub.services", factory: { _ in SwiftLogNoOpLogHandler() })))
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await group.run()) } catch { outcome = .failure(error) }
        if let embeddedRelay {
            await embeddedRelay.group.triggerGracefulShutdown()
            _ = await embeddedRelay.task.result
        }
        if case .failure(let error) = outcome {
            let reason = started.failure ?? error
            status.clearLine()
            logger.error("\(String(describing: reason))")
            throw ExitCode(started.didStart ? ExitStatus.runtimeFailure : ExitStatus.cannotStart)
        }
        status.clearLine()
 let totals = statistics.snapshot()
        logger.info(
            "\(destinationsSummary(outputPath, publisher)): \(totals.framesEncoded) frames (\(totals.keyframes) keyframes, \(totals.keepalives) keepalives), \(totals.bytesEncoded) bytes; \(totals.framesCaptured) changed ticks captured, \(totals.framesUnchanged) unchanged ticks skipped, \(totals.missedTicks) ticks missed"
        )
    }
}

extension ScreenpubCommand {
    /// The WebSocket URL and token to publish with: the given token, or a new session made with the secret.
    static func credentials(server: String, token: String?) async throws -> (url: String, token: String, announcement: String?) {
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        if let token { return (RelayEndpoint.webSocketURL(server: base), token, nil) }
        guard let secret = ProcessInfo.processInfo.environment["SCREENRELAY_SECRET"], !secret.isEmpty else {
            throw OutputProblem("--server needs --token, or the relay secret in $SCREENRELAY_SECRET to make a session")
        }
        var request = URLRequest(url: URL(string: base + "/session")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(secret)", forHTTPHeaderField: "Authorization")
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw OutputProblem("cannot reach the relay at \(base): \(error.localizedDescription)")
        }
        guard (response as? HTTPURLResponse)?.statusCode == 200,
            let session = try? JSONDecoder().decode(RelayServer.SessionCreated.self, from: data)
        else {
            throw OutputProblem("the relay at \(base) did not create a session: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return (session.relayURL, session.token, announcement(session))
    }

    /// What screenpub prints about a session it made: scripts read these lines.
    static func announcement(_ session: RelayServer.SessionCreated) -> String {
        "session: \(session.sessionId)\nrelay:   \(session.relayURL)\nviewer:  \(session.viewerURL)"
    }

    /// The relay started inside screenpub. It keeps archives in `dataDirectory` (by default
    /// $XDG_STATE_HOME/screenpub/relay-PORT; none on a random port, whose archives nobody could find again);
    /// if that directory cannot be used, it still relays, without archives.
    static func embeddedRelay(port: Int, dataDirectory: String?, logger: Logger) async throws -> RelayServer {
        var configuration = RelayConfiguration(
            host: "127.0.0.1", port: port, secret: embeddedRelaySecret(),
            dataDirectory: dataDirectory ?? (port == 0 ? nil : RelayConfiguration.defaultDataDirectory(application: "screenpub") + "/relay-\(port)"))
        do {
            return try await RelayServer(configuration: configuration, logger: logger)
        } catch {
            logger.warning("archives are off: \(configuration.dataDirectory ?? ""): \(error)")
            configuration.dataDirectory = nil
            return try await RelayServer(configuration: configuration, logger: logger)
        }
    }

    /// The embedded relay's secret: $SCREENRELAY_SECRET when set (so that its HTTP API — tokens, signals,
    /// archives — can be used with curl), else a random one that lives and dies with this process.
    static func embeddedRelaySecret() -> String {
        if let secret = ProcessInfo.processInfo.environment["SCREENRELAY_SECRET"], !secret.isEmpty { return secret }
        return randomSecret()
    }

    /// A secret for a relay that lives and dies with this process.
    static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 16) }.joined()
            .padding(toLength: 48, withPad: "0", startingAt: 0)
    }
}

/// Prints to standard output at once, also when it is a pipe (scripts read the URLs while screenpub runs).
func printNow(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

private func destinationsSummary(_ output: String?, _ publisher: RelayPublisher?) -> String {
    [output.map { "wrote \($0)" }, publisher.map { "published to \($0.endpoint)" }].compactMap { $0 }.joined(separator: " and ")
}

/// Runs a publisher's network side as a service. Its connection ends when the capture pipeline finishes the
/// sink; the service then waits for the group's shutdown to reach it, as ServiceLifecycle expects.
struct PublisherService: Service {
    let publisher: RelayPublisher
    func run() async throws {
        try await publisher.run()
        try? await gracefulShutdown()
    }
}

/// Parses a window id as xwininfo prints it: decimal or 0x-prefixed hex.
func parseWindowID(_ text: String) -> UInt? {
    let value = text.lowercased().hasPrefix("0x") ? UInt(text.dropFirst(2), radix: 16) : UInt(text)
    return value.flatMap { $0 == 0 ? nil : $0 }
}

private func describe(_ target: X11CaptureTarget) -> String {
    switch target {
    case .rootWindow: "the screen"
    case .monitor(let index): "monitor \(index)"
    case .window(let id): "window 0x\(String(id, radix: 16))"
    case .region(let rect): "region \(rect)"
    }
}

/// Creates the output file to prove it can be written, refusing to replace a recording unless told to.
private func probeWritable(_ path: String, overwrite: Bool) throws {
    if !overwrite, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 {
        throw OutputProblem("\(path) exists (\(size) bytes); pass --overwrite to replace it")
    }
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
        throw OutputProblem("cannot create \(path): check that its directory exists and is writable")
    }
}

struct OutputProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension VideoCodec: ExpressibleByArgument {}
