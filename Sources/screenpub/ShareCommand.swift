public import ArgumentParser
import Foundation
import Logging
import ScreenCapturePipeWire
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

/// `screenpub [share]`: capture, encode and publish until stopped.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share the screen (the default command: `screenpub --fps 5` is `screenpub share --fps 5`).",
        discussion: """
            Captures the X11 root window (or one monitor, window or region) with MIT-SHM, skipping ticks on \
            which nothing changed (XDamage); on a Wayland session, what the desktop's ScreenCast portal grants \
            (once: the grant is remembered in $XDG_STATE_HOME/screenpub/portal-restore-token), as a PipeWire \
            stream, skipping what its damage metadata says is unchanged. It encodes with libvpx (VP9 screen-content tuning by default) and publishes \
            it as a screen-type stream to screenrelay, and/or records it to a WebM file whose timed metadata \
            track keeps every frame's metadata.

            Where it goes: with --server, to that relay (with --token, or a new session made with the relay \
            secret from $SCREENRELAY_SECRET); with --output, to a file; with neither, to a relay started \
            inside screenpub on 127.0.0.1 (--port), whose session and viewer URLs are printed (its HTTP API takes \
            $SCREENRELAY_SECRET when set, else a random secret).

            Settings: every option can also be set in $XDG_CONFIG_HOME/screenpub/config.toml (or --config FILE) \
            as `name = value` with the option's long name (`fps = 5`, `server = "http://relay:8090"`, \
            `cursor = false`), or in the environment as SCREENPUB_NAME (SCREENPUB_FPS=5). The command line wins \
            over the environment, which wins over the file. SIGHUP reads them again: capture and encoding \
            settings (fps, bitrate, speed, threads, metadata, keepalive, cursor, display and target) take effect \
            at once, without dropping the stream; the others at the next start.

            Control: while sharing, `screenpub status|pause|resume|stop` talk to it over the control socket \
            $XDG_RUNTIME_DIR/screenpub.sock (mode 0600).

            Exit status: 0 finished (duration reached, or stopped with SIGINT/SIGTERM or `screenpub stop`: the \
            file is complete); 1 capture, encoding or writing failed after starting (what was recorded stays \
            readable); 2 could not start (no display, unknown window or monitor, bad region, output not \
            writable or already there without --overwrite, control socket in use, no PipeWire or portal); 64 \
            invalid command line; 77 screen sharing declined in the portal's dialog; 78 invalid configuration \
            file or SCREENPUB_* variable.
            """)

    @Option(help: "Frames per second to capture (at most; unchanged ticks cost almost nothing).")
    var fps: Double = 5

    @Option(help: "Capture with: auto (the ScreenCast portal and PipeWire on a Wayland session — $WAYLAND_DISPLAY or XDG_SESSION_TYPE=wayland — else X11), x11 (MIT-SHM), or pipewire (the portal, or --pipewire-node).")
    var backend: CaptureBackend = .auto

    @Option(help: "Capture this PipeWire node directly, without the portal (an id from `pw-cli ls Node`; implies --backend pipewire).")
    var pipewireNode: UInt32?

    @Option(help: "With --pipewire-node: an inherited file descriptor connected to PipeWire (default: the user's daemon, $XDG_RUNTIME_DIR/pipewire-0).")
    var pipewireRemote: Int32?

    @Option(help: "What the ScreenCast portal offers to share: monitor, window or any.")
    var portalSource: ScreenCastPortalRequest.Sources = .monitor

    @Option(help: "Seconds to wait for the ScreenCast portal, the user's answer to its dialog included, before giving up.")
    var portalTimeout: Double = 300

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

    @Flag(
        inversion: .prefixedNo,
        help: "With --server: when the relay cannot be reached or the connection drops, reconnect with backoff (0.25 s doubling to 15 s, ±20 % jitter); --no-reconnect exits instead.")
    var reconnect = true

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

    @Flag(inversion: .prefixedNo, help: "Show incoming chat lines as desktop notifications (notify-send), besides logging them.")
    var notifyChat = false

    @Flag(inversion: .prefixedNo, help: "Draw the pointer into the frames.")
    var cursor = true

    @Flag(inversion: .prefixedNo, help: "Capture with MIT-SHM when available (--no-shm: XGetImage, for comparison).")
    var shm = true

    @Option(help: "When the X display, PipeWire or the portal is missing or goes away, try again every SECONDS instead of exiting; the relay session, its viewers and the recording stay open meanwhile. 0: exit (1 if it went away, 2 if it was never there).")
    var captureRetry: Double = 0

    @Option(help: "The control socket for `screenpub status|pause|resume|stop` (default: $XDG_RUNTIME_DIR/screenpub.sock; none without $XDG_RUNTIME_DIR).")
    var controlSocket: String?

    @Option(help: "Read settings from this TOML file instead of $XDG_CONFIG_HOME/screenpub/config.toml.")
    var config: String?

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
        guard captureRetry >= 0 else { throw ValidationError("--capture-retry must not be negative") }
        guard portalTimeout > 0 else { throw ValidationError("--portal-timeout must be positive") }
        if pipewireRemote != nil && pipewireNode == nil { throw ValidationError("--pipewire-remote needs --pipewire-node") }
        if let pipewireRemote, fcntl(pipewireRemote, F_GETFD) < 0 {
            throw ValidationError("--pipewire-remote \(pipewireRemote) is not an open file descriptor")
        }
        if pipewireNode != nil && backend == .x11 { throw ValidationError("--pipewire-node needs --backend pipewire (or auto)") }
        if resolvedBackend == .pipewire {
            for (given, name) in [(monitor != nil, "--monitor"), (window != nil, "--window"), (region != nil, "--region"), (display != nil, "--display")] where given {
                throw ValidationError("\(name) is for X11 capture; with PipeWire the portal's dialog picks what is shared (--portal-source)")
            }
        }
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

    /// `--backend auto` decided: PipeWire on a Wayland session (unless an X display was asked for), or
    /// when a node is given; X11 otherwise.
    var resolvedBackend: CaptureBackend {
        switch backend {
        case .x11, .pipewire: return backend
        case .auto:
            if pipewireNode != nil { return .pipewire }
            if display != nil || monitor != nil || window != nil || region != nil { return .x11 }
            let environment = ProcessInfo.processInfo.environment
            let wayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty || environment["XDG_SESSION_TYPE"] == "wayland"
            return wayland ? .pipewire : .x11
        }
    }

    /// What the capture thread needs; a SIGHUP reload swaps it for a new one.
    var captureSettings: CaptureSettings {
        let source: CaptureSource
        if resolvedBackend == .pipewire {
            if let pipewireNode {
                source = .pipeWireNode(
                    PipeWireCaptureOptions(
                        remote: pipewireRemote.map { .fileDescriptor($0) } ?? .default, nodeID: pipewireNode, drawsCursor: cursor))
            } else {
                source = .portal(
                    ScreenCastPortalRequest(
                        sources: portalSource, cursor: cursor ? .embedded : .hidden,
                        restoreTokenFile: ScreenCastPortalRequest.defaultRestoreTokenFile(environment: ProcessInfo.processInfo.environment),
                        timeout: portalTimeout))
            }
        } else {
            let target: X11CaptureTarget =
                if let monitor { .monitor(monitor) } else if let window { .window(parseWindowID(window)!) } else if let region
            { .region(PixelRect(parsing: region)!) } else { .rootWindow }
            source = .x11(X11CaptureOptions(displayName: display, target: target, drawsCursor: cursor, usesSharedMemory: shm))
        }
        let keepaliveSeconds = keepalive ?? (output != nil && server == nil ? 0 : 5)
        return CaptureSettings(
            framesPerSecond: fps, source: source,
            encoder: VPXEncoderConfiguration(
                codec: codec, bitrateKbps: bitrate, framesPerSecond: fps,
                threads: threads ?? (fps >= 15 && ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1), speed: speed),
            // validate() has checked the metadata option.
            metadata: (try? MetadataPolicy(option: metadata)) ?? .captureTime,
            keepaliveInterval: keepaliveSeconds > 0 ? keepaliveSeconds : nil, duration: duration)
    }

    /// Settings that only a restart changes: where the stream goes and how the process runs.
    var startupSettings: [String: String] {
        [
            "codec": codec.rawValue, "output": output ?? "", "server": server ?? "", "token": token ?? "", "port": String(port),
            "reconnect": String(reconnect), "data-dir": dataDir ?? "", "control-socket": controlSocket ?? "",
            "log-format": logFormat, "notify-chat": String(notifyChat), "overwrite": String(overwrite),
            "capture-retry": String(captureRetry), "pipewire-remote": pipewireRemote.map(String.init) ?? "",
        ]
    }

    func run() async throws {
        LogFormat(rawValue: logFormat)?.bootstrap()
        var logger = Logger(label: "screenpub")
        logger.logLevel = verbose ? .debug : .info
        try await ShareRun(command: self, logger: logger).run()
    }
}

/// The capture side's settings (see ``ShareCommand/captureSettings``).
struct CaptureSettings: Sendable, Equatable {
    var framesPerSecond: Double
    var source: CaptureSource
    var encoder: VPXEncoderConfiguration
    var metadata: MetadataPolicy
    var keepaliveInterval: Double?
    var duration: Double?
}

extension ShareCommand {
    /// The WebSocket URL and token to publish with: the given token, or a new session made with the secret.
    static func credentials(server: String, token: String?) async throws -> (url: String, token: String, session: RelayServer.SessionCreated?) {
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
        return (session.relayURL, session.token, session)
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

func destinationsSummary(_ output: String?, _ publisher: RelayPublisher?) -> String {
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

/// `--backend`.
enum CaptureBackend: String, ExpressibleByArgument, CaseIterable, Sendable {
    case auto, x11, pipewire
}

extension ScreenCastPortalRequest.Sources: ExpressibleByArgument {}

/// Where frames come from.
enum CaptureSource: Sendable, Equatable {
    case x11(X11CaptureOptions)
    /// A PipeWire node given by id (no portal).
    case pipeWireNode(PipeWireCaptureOptions)
    /// What the ScreenCast portal grants.
    case portal(ScreenCastPortalRequest)

    /// For logs and `screenpub status`: what is captured.
    var targetDescription: String {
        switch self {
        case .x11(let options): describe(options.target)
        case .pipeWireNode(let options): "PipeWire node \(options.nodeID)"
        case .portal(let request): "the \(request.sources == .any ? "monitor or window" : request.sources.rawValue) granted by the ScreenCast portal"
        }
    }

    /// For `screenpub status`: the X display, or "pipewire".
    var displayDescription: String? {
        switch self {
        case .x11(let options): options.displayName ?? ProcessInfo.processInfo.environment["DISPLAY"]
        case .pipeWireNode, .portal: "pipewire"
        }
    }
}

func describe(_ target: X11CaptureTarget) -> String {
    switch target {
    case .rootWindow: "the screen"
    case .monitor(let index): "monitor \(index)"
    case .window(let id): "window 0x\(String(id, radix: 16))"
    case .region(let rect): "region \(rect)"
    }
}

/// Creates the output file to prove it can be written, refusing to replace a recording unless told to.
func probeWritable(_ path: String, overwrite: Bool) throws {
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
