public import ArgumentParser
public import ScreenCapturePipeWire
public import ScreenCodec
public import ScreenMedia

/// `screenpub share`'s options: every setting of a share as a command-line option (and, through
/// `LayeredArguments`, a config-file key and a SCREENPUB_* variable), each defaulting to ``ShareSettings``.
public struct ShareOptions: ParsableArguments {
    /// Every option's default, from the one place that sets them.
    static let defaults = ShareSettings()

    public init() {}

    @Option(help: "Frames per second to capture (at most; unchanged ticks cost almost nothing).")
    public var fps = ShareOptions.defaults.fps

    @Option(help: "Capture with: auto (the ScreenCast portal and PipeWire on a Wayland session — $WAYLAND_DISPLAY or XDG_SESSION_TYPE=wayland — else X11), x11 (MIT-SHM), or pipewire (the portal, or --pipewire-node).")
    public var backend = ShareOptions.defaults.backend

    @Option(help: "Capture this PipeWire node directly, without the portal (an id from `pw-cli ls Node`; implies --backend pipewire).")
    public var pipewireNode: UInt32?

    @Option(help: "With --pipewire-node: an inherited file descriptor connected to PipeWire (default: the user's daemon, $XDG_RUNTIME_DIR/pipewire-0).")
    public var pipewireRemote: Int32?

    @Option(help: "What the ScreenCast portal offers to share: monitor, window or any (a desktop whose portal shares only monitors, such as xdg-desktop-portal-wlr, refuses window).")
    public var portalSource = ShareOptions.defaults.portalSource

    @Option(help: "Seconds to wait for the ScreenCast portal, the user's answer to its dialog included, before giving up.")
    public var portalTimeout = ShareOptions.defaults.portalTimeout

    @Option(help: "X display to capture, e.g. :0 (default: $DISPLAY).")
    public var display: String?

    @Option(help: "Capture one RandR monitor: its index from 0 or its name (HDMI-1), as --list-monitors shows them.")
    public var monitor: String?

    @Option(help: ArgumentHelp(
        "Capture one window: its id (decimal or 0x hex, as --list-windows and xwininfo print it), or a glob matching exactly one window's class or title, ignoring case ('*Firefox*').",
        discussion: "A pattern that matches several windows lists them and exits 64; it is matched once, when capture starts."))
    public var window: String?

    @Option(help: "Capture a rectangle of the screen: X,Y,WIDTH,HEIGHT.")
    public var region: String?

    @Flag(help: "List the windows --window can name (id, class, geometry, title; top of the stack first) and exit.")
    public var listWindows = false

    @Flag(help: "List the monitors --monitor can name (index, RandR name, geometry, primary) and exit.")
    public var listMonitors = false

    @Flag(help: "With --list-windows or --list-monitors: print JSON instead of a table.")
    public var json = false

    @Option(help: ArgumentHelp(
        "Hide every window whose WM_CLASS or title matches this glob, ignoring case (repeatable; X11): it is covered in every frame before encoding, wherever it moves, from the first frame it shows in. Quote patterns with * or ?: --mask-window KeePassXC --mask-window '*Bitwarden*'.",
        valueName: "PATTERN"))
    public var maskWindow = ShareOptions.defaults.maskWindow

    @Option(help: ArgumentHelp("Hide this rectangle of the captured area in every frame (repeatable; X11 and PipeWire).", valueName: "X,Y,W,H"))
    public var maskRegion = ShareOptions.defaults.maskRegion

    @Option(help: "How hidden areas look: solid (flat grey with a striped badge) or pixelate (32-pixel blocks of their average colours, with the badge).")
    public var maskStyle = ShareOptions.defaults.maskStyle

    @Option(help: "Video codec: auto (AV1 up to 10 fps, VP9 above: docs/performance.md says why), av1 (libaom, screen-content tools), vp9 (libvpx, screen tuning), vp8 (for old receivers) or h264 (openh264, screen content, 4:2:0: for players that decode nothing else).")
    public var codec = ShareOptions.defaults.codec

    @Option(help: "Colour sampling: 444 keeps 1-pixel coloured text and lines sharp (AV1 High profile, VP9 profile 1; more bytes and CPU), 420 halves colour resolution (what every decoder plays), auto picks 444 where it pays (docs/performance.md says when). VP8 has only 420.")
    public var chroma = ShareOptions.defaults.chroma

    @Option(help: "Target bit rate in kbit/s (constant bit rate).")
    public var bitrate = ShareOptions.defaults.bitrate

    @Option(help: ArgumentHelp(
        "Share sound too, through PipeWire: desktop (what the desktop plays), mic (the default input), a node id or node.name from `pw-cli ls Node` (for an output, what it plays), or none.",
        valueName: "SOURCE"))
    public var audio = ShareOptions.defaults.audio

    @Option(help: "Opus bit rate of the sound in kbit/s (6–510; silence costs almost nothing whatever it is).")
    public var audioBitrate = ShareOptions.defaults.audioBitrate

    @Flag(help: "When the sound cannot be captured (no PipeWire), share the screen without it and warn, instead of exiting.")
    public var audioOptional = ShareOptions.defaults.audioOptional

    @Option(
        help: ArgumentHelp(
            "Per-frame metadata: 'time' (ISO-8601 capture time, the default), 'none', or a fixed text of at most 32 bytes.",
            valueName: "TEXT"))
    public var metadata: String?

    @Option(help: "Record to this WebM file (AV1, VP9, VP8), or this Matroska file (.mkv) for --codec h264: WebM cannot carry H.264.")
    public var output: String?

    @Option(help: "Publish to the screenrelay at this URL (http://host:port).")
    public var server: String?

    @Option(
        name: [.customLong("to"), .customLong("publish")],
        help: "Also send the stream here (repeatable): a relay (http(s)://host:port, or ws(s)://host:port/ws with --token), a WebM or Matroska file (file:PATH or a path), or an SFU's WHIP endpoint (whip+https://…, with --whip-token; VP8/VP9).")
    public var to = ShareOptions.defaults.to

    @Option(help: "A publisher token for --server (default: make a session with $SCREENRELAY_SECRET).")
    public var token: String?

    @Option(help: "The bearer token a whip+ destination expects (Authorization: Bearer; better in the config file or $SCREENPUB_WHIP_TOKEN than on the command line).")
    public var whipToken: String?

    @Option(help: "Port of the relay started inside screenpub when neither --server nor --output is given (0: any free port).")
    public var port = ShareOptions.defaults.port

    @Option(help: "Address the relay inside screenpub listens on: 0.0.0.0 (or ::) lets other machines watch — with --tls-cert, as browsers offer WebCodecs only on secure pages.")
    public var host = ShareOptions.defaults.host

    @Option(help: "The URL viewers use to reach the relay inside screenpub, if not its own address (e.g. behind a TLS proxy).")
    public var publicURL: String?

    @Option(help: "PEM certificate chain: the relay inside screenpub serves HTTPS and WSS (with --tls-key; SIGHUP reads both again).")
    public var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert.")
    public var tlsKey: String?

    @Option(help: "Trust the CA certificates in this PEM file for an https:// or wss:// relay, instead of the system's.")
    public var caFile: String?

    @Flag(
        inversion: .prefixedNo,
        help: "With --server: when the relay cannot be reached or the connection drops, reconnect with backoff (0.25 s doubling to 15 s, ±20 % jitter); --no-reconnect exits instead.")
    public var reconnect = ShareOptions.defaults.reconnect

    @Option(help: "Where the embedded relay keeps archives (default: $XDG_STATE_HOME/screenpub/relay-PORT; none with --port 0).")
    public var dataDir: String?

    @Flag(help: "Replace the --output file if it exists (otherwise screenpub refuses, to never lose a recording).")
    public var overwrite = ShareOptions.defaults.overwrite

    @Option(help: "Stop after this many seconds.")
    public var duration: Double?

    @Option(help: "Re-send the unchanged picture after this many idle seconds; 0: never. Default: 5 when publishing (live viewers see the stream is alive), 0 for a recording only (a gap is idle time).")
    public var keepalive: Double?

    @Option(help: "Encoder threads (default: 1; 2 from 15 fps up on a machine with 2 or more cores, which keeps a full-screen change at 1080p30 within the frame interval).")
    public var threads: Int?

    @Option(help: "Encoder speed (cpu-used): AV1 7–10 (default 10), VP9 5–9 (default 8), VP8 4–16 (default 12), H.264 0–2 (openh264's complexity, high to low; default 1); higher is faster, coarser.")
    public var speed: Int?

    @Option(help: "Temporal layers, 1–3 (AV1, VP9, H.264; VP8 codes 1): with 3 the relay can send a viewer on a slow link a half or a quarter of the frames, which still decode, instead of holding everyone back. Default: 3 when publishing live, 1 for a recording only (layers cost bytes that nothing there uses).")
    public var temporalLayers: Int?

    @Option(help: "The second encoding made while a relay's viewer decodes none of what is shared (an iPhone, a browser without AV1 or VP9): h264 (openh264, half the bit rate, only while such a viewer watches) or none (never a second encoder; such a viewer is told it cannot decode the stream).")
    public var rendition = ShareOptions.defaults.rendition

    @Flag(inversion: .prefixedNo, help: "Show incoming chat lines as desktop notifications (notify-send), besides logging them (--no-notify-chat: only log them).")
    public var notifyChat = ShareOptions.defaults.notifyChat

    @Flag(inversion: .prefixedNo, help: "Draw the pointer into the frames (--no-cursor: leave it out; on Wayland, ask the portal for a stream without it).")
    public var cursor = ShareOptions.defaults.cursor

    @Flag(inversion: .prefixedNo, help: "Capture with MIT-SHM when available (--no-shm: XGetImage, for comparison).")
    public var shm = ShareOptions.defaults.shm

    @Option(help: "When the X display, PipeWire or the portal is missing or goes away, try again every SECONDS instead of exiting; the relay session, its viewers and the recording stay open meanwhile. 0: exit (1 if it went away, 2 if it was never there).")
    public var captureRetry = ShareOptions.defaults.captureRetry

    @Option(help: "The control socket for `screenpub status|pause|resume|stop` (default: $XDG_RUNTIME_DIR/screenpub.sock; none without $XDG_RUNTIME_DIR or when given as \"\").")
    public var controlSocket: String?

    @Option(help: "Read settings from this TOML file instead of $XDG_CONFIG_HOME/screenpub/config.toml.")
    public var config: String?

    @Option(help: "Log lines on standard error: text (what journald shows as is) or json (one object per line).")
    public var logFormat = ShareOptions.defaults.logFormat

    @Flag(name: .shortAndLong, help: "Log more detail.")
    public var verbose = false

    /// The options as the share library takes them.
    public var settings: ShareSettings {
        var s = ShareSettings()
        (s.fps, s.backend, s.pipewireNode, s.pipewireRemote, s.portalSource, s.portalTimeout) = (fps, backend, pipewireNode, pipewireRemote, portalSource, portalTimeout)
        (s.display, s.monitor, s.window, s.region, s.codec, s.bitrate, s.metadata) = (display, monitor, window, region, codec, bitrate, metadata)
        (s.output, s.server, s.to, s.token, s.port, s.reconnect, s.dataDir, s.overwrite) = (output, server, to, token, port, reconnect, dataDir, overwrite)
        (s.whipToken, s.chroma, s.rendition) = (whipToken, chroma, rendition)
        (s.duration, s.keepalive, s.threads, s.speed, s.notifyChat, s.cursor, s.shm) = (duration, keepalive, threads, speed, notifyChat, cursor, shm)
        (s.captureRetry, s.controlSocket, s.logFormat, s.temporalLayers) = (captureRetry, controlSocket, logFormat, temporalLayers)
        (s.host, s.publicURL, s.tlsCert, s.tlsKey, s.caFile) = (host, publicURL, tlsCert, tlsKey, caFile)
        (s.audio, s.audioBitrate, s.audioOptional) = (audio, audioBitrate, audioOptional)
        (s.maskWindow, s.maskRegion, s.maskStyle) = (maskWindow, maskRegion, maskStyle)
        return s
    }
}

extension CaptureBackend: ExpressibleByArgument {}
extension ScreenCastPortalRequest.Sources: ExpressibleByArgument {}
extension VideoCodec: ExpressibleByArgument {}
extension VideoCodecChoice: ExpressibleByArgument {}
extension ChromaChoice: ExpressibleByArgument {}
extension RenditionChoice: ExpressibleByArgument {}
extension CoverStyle: ExpressibleByArgument {}
