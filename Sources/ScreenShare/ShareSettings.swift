public import ScreenCapturePipeWire
public import ScreenMedia
public import ScreenCodec
import ScreenRelay

/// A share's settings as the user gives them (command line, `SCREENPUB_*`, config.toml), before they are
/// checked and resolved into a ``ShareConfiguration``. Every field is the option of the same long name.
public struct ShareSettings: Sendable, Equatable {
    public var fps = 5.0
    public var backend = CaptureBackend.auto
    public var pipewireNode: UInt32?
    public var pipewireRemote: Int32?
    public var portalSource = ScreenCastPortalRequest.Sources.monitor
    public var portalTimeout = 300.0
    public var display: String?
    public var monitor: String?
    public var window: String?
    public var region: String?
    /// `--mask-window` globs, `--mask-region` rectangles (X,Y,W,H) and `--mask-style`.
    public var maskWindow: [String] = []
    public var maskRegion: [String] = []
    public var maskStyle = CoverStyle.solid
    public var codec = VideoCodecChoice.auto
    public var chroma = ChromaChoice.auto
    public var bitrate = 1500
    public var metadata: String?
    /// `--audio`: none, desktop, mic, or a PipeWire node; `--audio-bitrate` in kbit/s; `--audio-optional`.
    public var audio = "none"
    public var audioBitrate = 64
    public var audioOptional = false
    public var output: String?
    public var server: String?
    /// More destinations by URL (`--to`): relays (`http(s)://`, `ws(s)://`) and files (`file:` or a path).
    public var to: [String] = []
    public var token: String?
    /// `--whip-token`: the bearer token WHIP destinations send.
    public var whipToken: String?
    public var port = RelayConfiguration.defaults.port
    /// The embedded relay's listening address, its public URL, and its TLS certificate and key.
    public var host = RelayConfiguration.defaults.host
    public var publicURL: String?
    public var tlsCert: String?
    public var tlsKey: String?
    /// A PEM file of CA certificates to trust for an https:// or wss:// relay (default: the system's).
    public var caFile: String?
    public var reconnect = true
    public var dataDir: String?
    public var overwrite = false
    public var duration: Double?
    public var keepalive: Double?
    public var threads: Int?
    public var speed: Int?
    /// Nil: 3 when anything is published live, 1 for recordings only (nothing thins a file's layers).
    public var temporalLayers: Int?
    public var notifyChat = false
    public var rendition = RenditionChoice.h264
    public var cursor = true
    public var shm = true
    public var captureRetry = 0.0
    public var controlSocket: String?
    public var logFormat = "text"

    public init() {}
}

/// `--backend`.
public enum CaptureBackend: String, CaseIterable, Sendable {
    case auto, x11, pipewire
}
