public import ArgumentParser
import Foundation
import Logging
import ScreenCapturePipeWire
import ScreenCodec
import ScreenMedia
import ScreenService
import ScreenShare
import ServiceLifecycle

/// `screenpub [share]`: capture, encode and publish until stopped.
struct ShareCommand: AsyncParsableCommand {
    /// Every option's default, from the one place that sets them.
    private static let defaults = ShareSettings()

    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share the screen (the default command: `screenpub --fps 5` is `screenpub share --fps 5`).",
        discussion: """
            Captures the X11 root window (or one monitor, window or region) with MIT-SHM, skipping ticks on \
            which nothing changed (XDamage); on a Wayland session, what the desktop's ScreenCast portal grants \
            (once: the grant is remembered in $XDG_STATE_HOME/screenpub/portal-restore-token), as a PipeWire \
            stream, skipping what its damage metadata says is unchanged. It encodes with libaom (AV1 with screen-content tools, up to 10 fps) or libvpx (VP9 with screen tuning, above), and publishes \
            it as a screen-type stream to screenrelay, and/or records it to a WebM file whose timed metadata \
            track keeps every frame's metadata.

            Where it goes: with --server, to that relay (with --token, or a new session made with the relay \
            secret from $SCREENRELAY_SECRET); with --output, to a file; with --to URL, to each (relays, files); \
            with none of these, to a relay started inside screenpub on 127.0.0.1 (--port), whose session and \
            viewer URLs are printed (its HTTP API takes $SCREENRELAY_SECRET when set, else a random secret). \
            For viewers on other machines: --host 0.0.0.0 with --tls-cert and --tls-key (browsers decode only \
            on https pages); the printed link then names this machine's address, or --public-url.

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
            invalid command line (or a --window pattern matching several windows); 77 screen sharing declined in the portal's dialog; 78 invalid configuration \
            file or SCREENPUB_* variable.

            Examples:
              screenpub                                         # share $DISPLAY to a relay inside screenpub; prints the viewer link
              screenpub --fps 2 --window '*firefox*'            # one window, picked by its title or class
              screenpub --list-monitors && screenpub --monitor HDMI-1
              screenpub --output demo.webm --duration 60        # record a minute to a file
              screenpub --server https://relay.example.org --token eyJ…   # publish to a screenrelay
              screenpub --mask-window KeePassXC --audio desktop # hide the password manager, share the sound
              screenpub status                                  # what a running share is doing
            """)

    @Option(help: "Frames per second to capture (at most; unchanged ticks cost almost nothing).")
    var fps = ShareCommand.defaults.fps

    @Option(help: "Capture with: auto (the ScreenCast portal and PipeWire on a Wayland session — $WAYLAND_DISPLAY or XDG_SESSION_TYPE=wayland — else X11), x11 (MIT-SHM), or pipewire (the portal, or --pipewire-node).")
    var backend = ShareCommand.defaults.backend

    @Option(help: "Capture this PipeWire node directly, without the portal (an id from `pw-cli ls Node`; implies --backend pipewire).")
    var pipewireNode: UInt32?

    @Option(help: "With --pipewire-node: an inherited file descriptor connected to PipeWire (default: the user's daemon, $XDG_RUNTIME_DIR/pipewire-0).")
    var pipewireRemote: Int32?

    @Option(help: "What the ScreenCast portal offers to share: monitor, window or any.")
    var portalSource = ShareCommand.defaults.portalSource

    @Option(help: "Seconds to wait for the ScreenCast portal, the user's answer to its dialog included, before giving up.")
    var portalTimeout = ShareCommand.defaults.portalTimeout

    @Option(help: "X display to capture, e.g. :0 (default: $DISPLAY).")
    var display: String?

    @Option(help: "Capture one RandR monitor: its index from 0 or its name (HDMI-1), as --list-monitors shows them.")
    var monitor: String?

    @Option(help: ArgumentHelp(
        "Capture one window: its id (decimal or 0x hex, as --list-windows and xwininfo print it), or a glob matching exactly one window's class or title, ignoring case ('*Firefox*').",
        discussion: "A pattern that matches several windows lists them and exits 64; it is matched once, when capture starts."))
    var window: String?

    @Option(help: "Capture a rectangle of the screen: X,Y,WIDTH,HEIGHT.")
    var region: String?

    @Flag(help: "List the windows --window can name (id, class, geometry, title; top of the stack first) and exit.")
    var listWindows = false

    @Flag(help: "List the monitors --monitor can name (index, RandR name, geometry, primary) and exit.")
    var listMonitors = false

    @Flag(help: "With --list-windows or --list-monitors: print JSON instead of a table.")
    var json = false

    @Option(help: ArgumentHelp(
        "Hide every window whose WM_CLASS or title matches this glob, ignoring case (repeatable; X11): it is covered in every frame before encoding, wherever it moves, from the first frame it shows in. Quote patterns with * or ?: --mask-window KeePassXC --mask-window '*Bitwarden*'.",
        valueName: "PATTERN"))
    var maskWindow = ShareCommand.defaults.maskWindow

    @Option(help: ArgumentHelp("Hide this rectangle of the captured area in every frame (repeatable; X11 and PipeWire).", valueName: "X,Y,W,H"))
    var maskRegion = ShareCommand.defaults.maskRegion

    @Option(help: "How hidden areas look: solid (flat grey with a striped badge) or pixelate (32-pixel blocks of their average colours, with the badge).")
    var maskStyle = ShareCommand.defaults.maskStyle

    @Option(help: "Video codec: auto (AV1 up to 10 fps, VP9 above: docs/performance.md says why), av1 (libaom, screen-content tools), vp9 (libvpx, screen tuning) or vp8 (for old receivers).")
    var codec = ShareCommand.defaults.codec

    @Option(help: "Target bit rate in kbit/s (constant bit rate).")
    var bitrate = ShareCommand.defaults.bitrate

    @Option(help: ArgumentHelp(
        "Share sound too, through PipeWire: desktop (what the desktop plays), mic (the default input), a node id or node.name from `pw-cli ls Node` (for an output, what it plays), or none.",
        valueName: "SOURCE"))
    var audio = ShareCommand.defaults.audio

    @Option(help: "Opus bit rate of the sound in kbit/s (6–510; silence costs almost nothing whatever it is).")
    var audioBitrate = ShareCommand.defaults.audioBitrate

    @Flag(help: "When the sound cannot be captured (no PipeWire), share the screen without it and warn, instead of exiting.")
    var audioOptional = ShareCommand.defaults.audioOptional

    @Option(
        help: ArgumentHelp(
            "Per-frame metadata: 'time' (ISO-8601 capture time, the default), 'none', or a fixed text of at most 32 bytes.",
            valueName: "TEXT"))
    var metadata: String?

    @Option(help: "Record to this WebM file.")
    var output: String?

    @Option(help: "Publish to the screenrelay at this URL (http://host:port).")
    var server: String?

    @Option(
        name: [.customLong("to"), .customLong("publish")],
        help: "Also send the stream here (repeatable): a relay (http(s)://host:port, or ws(s)://host:port/ws with --token), a WebM file (file:PATH or a path), or an SFU's WHIP endpoint (whip+https://…, with --whip-token; VP8/VP9).")
    var to = ShareCommand.defaults.to

    @Option(help: "A publisher token for --server (default: make a session with $SCREENRELAY_SECRET).")
    var token: String?

    @Option(help: "The bearer token a whip+ destination expects (Authorization: Bearer; better in the config file or $SCREENPUB_WHIP_TOKEN than on the command line).")
    var whipToken: String?

    @Option(help: "Port of the relay started inside screenpub when neither --server nor --output is given (0: any free port).")
    var port = ShareCommand.defaults.port

    @Option(help: "Address the relay inside screenpub listens on: 0.0.0.0 (or ::) lets other machines watch — with --tls-cert, as browsers offer WebCodecs only on secure pages.")
    var host = ShareCommand.defaults.host

    @Option(help: "The URL viewers use to reach the relay inside screenpub, if not its own address (e.g. behind a TLS proxy).")
    var publicURL: String?

    @Option(help: "PEM certificate chain: the relay inside screenpub serves HTTPS and WSS (with --tls-key; SIGHUP reads both again).")
    var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "Trust the CA certificates in this PEM file for an https:// or wss:// relay, instead of the system's.")
    var caFile: String?

    @Flag(
        inversion: .prefixedNo,
        help: "With --server: when the relay cannot be reached or the connection drops, reconnect with backoff (0.25 s doubling to 15 s, ±20 % jitter); --no-reconnect exits instead.")
    var reconnect = ShareCommand.defaults.reconnect

    @Option(help: "Where the embedded relay keeps archives (default: $XDG_STATE_HOME/screenpub/relay-PORT; none with --port 0).")
    var dataDir: String?

    @Flag(help: "Replace the --output file if it exists (otherwise screenpub refuses, to never lose a recording).")
    var overwrite = ShareCommand.defaults.overwrite

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Re-send the unchanged picture after this many idle seconds; 0: never. Default: 5 when publishing (live viewers see the stream is alive), 0 for a recording only (a gap is idle time).")
    var keepalive: Double?

    @Option(help: "Encoder threads (default: 1; 2 from 15 fps up on a machine with 2 or more cores, which keeps a full-screen change at 1080p30 within the frame interval).")
    var threads: Int?

    @Option(help: "Encoder speed (cpu-used), with --codec av1, vp9 or vp8: AV1 7–10 (default 10), VP9 5–9 (default 8), VP8 4–16 (default 12); higher is faster, coarser.")
    var speed: Int?

    @Flag(inversion: .prefixedNo, help: "Show incoming chat lines as desktop notifications (notify-send), besides logging them (--no-notify-chat: only log them).")
    var notifyChat = ShareCommand.defaults.notifyChat

    @Flag(inversion: .prefixedNo, help: "Draw the pointer into the frames (--no-cursor: leave it out; on Wayland, ask the portal for a stream without it).")
    var cursor = ShareCommand.defaults.cursor

    @Flag(inversion: .prefixedNo, help: "Capture with MIT-SHM when available (--no-shm: XGetImage, for comparison).")
    var shm = ShareCommand.defaults.shm

    @Option(help: "When the X display, PipeWire or the portal is missing or goes away, try again every SECONDS instead of exiting; the relay session, its viewers and the recording stay open meanwhile. 0: exit (1 if it went away, 2 if it was never there).")
    var captureRetry = ShareCommand.defaults.captureRetry

    @Option(help: "The control socket for `screenpub status|pause|resume|stop` (default: $XDG_RUNTIME_DIR/screenpub.sock; none without $XDG_RUNTIME_DIR or when given as \"\").")
    var controlSocket: String?

    @Option(help: "Read settings from this TOML file instead of $XDG_CONFIG_HOME/screenpub/config.toml.")
    var config: String?

    @Option(help: "Log lines on standard error: text (what journald shows as is) or json (one object per line).")
    var logFormat = ShareCommand.defaults.logFormat

    @Flag(name: .shortAndLong, help: "Log more detail.")
    var verbose = false

    /// The options as the share library takes them.
    var settings: ShareSettings {
        var s = ShareSettings()
        (s.fps, s.backend, s.pipewireNode, s.pipewireRemote, s.portalSource, s.portalTimeout) = (fps, backend, pipewireNode, pipewireRemote, portalSource, portalTimeout)
        (s.display, s.monitor, s.window, s.region, s.codec, s.bitrate, s.metadata) = (display, monitor, window, region, codec, bitrate, metadata)
        (s.output, s.server, s.to, s.token, s.port, s.reconnect, s.dataDir, s.overwrite) = (output, server, to, token, port, reconnect, dataDir, overwrite)
        s.whipToken = whipToken
        (s.duration, s.keepalive, s.threads, s.speed, s.notifyChat, s.cursor, s.shm) = (duration, keepalive, threads, speed, notifyChat, cursor, shm)
        (s.captureRetry, s.controlSocket, s.logFormat) = (captureRetry, controlSocket, logFormat)
        (s.host, s.publicURL, s.tlsCert, s.tlsKey, s.caFile) = (host, publicURL, tlsCert, tlsKey, caFile)
        (s.audio, s.audioBitrate, s.audioOptional) = (audio, audioBitrate, audioOptional)
        (s.maskWindow, s.maskRegion, s.maskStyle) = (maskWindow, maskRegion, maskStyle)
        return s
    }

    func validate() throws {
        do { _ = try ShareConfiguration(settings, environment: ProcessInfo.processInfo.environment) } catch { throw ValidationError(error.description) }
    }

    /// The share in one ServiceGroup; exits 2 if it could not start, 1 if it failed, 77 if declined.
    func run() async throws {
        if listWindows || listMonitors {
            let environment = ProcessInfo.processInfo.environment
            do {
                printNow(
                    listWindows
                        ? try CaptureTargets.windows(settings, environment: environment, json: json)
                        : try CaptureTargets.monitors(settings, environment: environment, json: json))
            } catch {
                FileHandle.standardError.write(Data("screenpub: \(error.message)\n".utf8))
                throw ExitCode(ExitStatus.cannotStart)
            }
            return
        }
        LogFormat(rawValue: logFormat)?.bootstrap()
        var logger = Logger(label: "screenpub")
        logger.logLevel = verbose ? .debug : .info
        let environment = ProcessInfo.processInfo.environment
        let share = Share(
            configuration: try ShareConfiguration(settings, environment: environment), logger: logger,
            interactive: isatty(STDERR_FILENO) == 1,
            rereadSettings: {
                do {
                    let command = try ScreenpubMain.parseShareCommand(commandLine: ScreenpubMain.shareCommandLine)
                    return .success(try ShareConfiguration(command.settings, environment: environment))
                } catch { return .failure(error as? ShareError ?? ShareError(.invalidSettings, "\(error)")) }
            },
            output: printNow)
        var failure: (any Error)?
        do {
            let services = try await share.prepare()
            let group = ServiceGroup(
                configuration: .init(
                    services: services, gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: Logger(label: "screenpub.services", factory: { _ in SwiftLogNoOpLogHandler() })))
            try await group.run()
        } catch {
            failure = error
        }
        guard let problem = share.finish(failure) else { return }
        logger.error("\(problem.message)")
        switch problem.kind {
        case .invalidSettings: throw ExitCode(ExitStatus.usage)
        case .cannotStart: throw ExitCode(ExitStatus.cannotStart)
        case .failed: throw ExitCode(ExitStatus.runtimeFailure)
        case .declined: throw ExitCode(ExitStatus.declined)
        }
    }
}

/// Prints to standard output at once, also when it is a pipe (scripts read the URLs while screenpub runs).
@Sendable func printNow(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

extension CaptureBackend: ExpressibleByArgument {}
extension ScreenCastPortalRequest.Sources: ExpressibleByArgument {}
extension VideoCodec: ExpressibleByArgument {}
extension VideoCodecChoice: ExpressibleByArgument {}
extension CoverStyle: ExpressibleByArgument {}
