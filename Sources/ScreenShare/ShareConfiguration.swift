import Foundation
import ScreenCapturePipeWire
import ScreenCaptureX11
import ScreenCodec
public import ScreenMedia
import ScreenPipeline
import ScreenTransport
import ScreenTransportClient
public import ScreenRelay
import ScreenService

/// One share, checked and resolved from ``ShareSettings`` and the environment it runs in (a ``ShareEnvironment``
/// passed in, never read from the process): what to capture and how to encode it, where the stream goes, and how it runs.
public struct ShareConfiguration: Sendable, Equatable {
    /// What the capture thread uses; a reload swaps it while the stream goes on.
    public var capture: CaptureSettings
    /// The sound shared with the screen; nil: none.
    public var audio: AudioSettings?
    /// Where the stream goes, by URL, in order (`--output`, `--server`, then each `--to`).
    public var destinations: [String]
    public var destinationOptions: DestinationOptions
    /// A relay inside screenpub when no destination is given: where it listens and keeps archives.
    public var embeddedRelay: EmbeddedRelaySettings?
    /// The control socket's path; nil: none.
    public var controlSocket: String?
    /// Seconds between capture attempts after a transient failure; nil: fail at once.
    public var captureRetry: Double?
    public var notifyChat: Bool
    /// The second rendition a relay may ask for (`--rendition`).
    public var rendition: RenditionChoice
    public var environment: [String: String]
    /// Settings only a restart changes (a reload warns when they differ).
    public var startupSettings: StartupSettings

    public struct EmbeddedRelaySettings: Sendable, Equatable {
        public var port: Int
        public var dataDirectory: String?
        public var host: String
        public var publicURL: String?
        public var tls: RelayTLSFiles?

        public init(port: Int, dataDirectory: String?, host: String = RelayConfiguration.defaults.host, publicURL: String? = nil, tls: RelayTLSFiles? = nil) {
            self.port = port
            self.dataDirectory = dataDirectory
            self.host = host
            self.publicURL = publicURL
            self.tls = tls
        }
    }

    /// Checks `settings` and resolves them, once: the backend is decided with the real `environment` first, and
    /// everything else is checked against what it resolved to, so nothing the user asked for is dropped later
    /// (a window mask on a Wayland session is refused, not ignored). Throws a ``ShareError`` (`.invalidSettings`)
    /// naming the option and what is wrong. `destinationKinds` are the URL schemes `--to` may name.
    public init(
        _ settings: ShareSettings, environment surroundings: ShareEnvironment, destinationKinds: [DestinationKind] = ShareDestinations.all
    ) throws(ShareError) {
        let environment = surroundings.variables
        let backend = Self.resolvedBackend(settings, environment: environment)
        try Self.check(settings, backend: backend, destinationKinds: destinationKinds, isOpenDescriptor: surroundings.isOpenDescriptor)
        self.environment = environment
        let mask: PrivacyMask
        do { mask = try Self.privacyMask(settings) } catch { throw ShareError(.invalidSettings, error.description) }
        let metadata: MetadataPolicy
        do { metadata = try MetadataPolicy(option: settings.metadata) } catch { throw ShareError(.invalidSettings, "--metadata: \(error)") }
        let source: CaptureSource
        switch backend {
        case .pipewire:
            if let node = settings.pipewireNode {
                source = .pipeWireNode(
                    PipeWireCaptureOptions(
                        remote: settings.pipewireRemote.map { .fileDescriptor($0) } ?? .default, nodeID: node, drawsCursor: settings.cursor,
                        mask: mask))
            } else {
                source = .portal(
                    ScreenCastPortalRequest(
                        sources: settings.portalSource, cursor: settings.cursor ? .embedded : .hidden,
                        restoreTokenFile: ScreenCastPortalRequest.defaultRestoreTokenFile(environment: environment), timeout: settings.portalTimeout,
                        mask: mask))
            }
        case .x11, .auto:
            source = .x11(
                X11CaptureOptions(
                    displayName: settings.display, target: try Self.x11Target(settings), drawsCursor: settings.cursor, usesSharedMemory: settings.shm,
                    mask: mask))
        }
        audio = AudioInput(argument: settings.audio).map {
            AudioSettings(input: $0, bitrateKbps: settings.audioBitrate, optional: settings.audioOptional)
        }
        destinations = [settings.output, settings.server].compactMap { $0 } + settings.to
        // A recording only: a gap in a file is idle time. Live viewers need to see that the stream is alive.
        let recordsOnly = destinations.allSatisfy { DestinationKind.scheme(of: $0) == "file" } && !destinations.isEmpty
        let keepalive = settings.keepalive ?? (recordsOnly ? 0 : 5)
        let cores = surroundings.processorCount
        let chroma = Self.resolvedChroma(settings)
        capture = CaptureSettings(
            framesPerSecond: settings.fps, source: source,
            codec: settings.codec,
            encoder: VideoEncoderConfiguration(
                codec: Self.resolvedCodec(settings), bitrateKbps: settings.bitrate, framesPerSecond: settings.fps,
                threads: settings.threads ?? (settings.fps >= 15 && cores >= 2 ? 2 : 1), speed: settings.speed,
                temporalLayers: settings.temporalLayers ?? (recordsOnly ? 1 : 3), chroma: chroma.chroma,
                chromaFollowsContent: chroma.followsContent, followsNetwork: !recordsOnly),
            metadata: metadata,
            keepaliveInterval: keepalive > 0 ? keepalive : nil, duration: settings.duration)
        destinationOptions = DestinationOptions(
            token: settings.token, reconnect: settings.reconnect, overwrite: settings.overwrite, trust: ClientTrust(caFile: settings.caFile),
            whipToken: settings.whipToken)
        embeddedRelay = destinations.isEmpty
            ? EmbeddedRelaySettings(
                port: settings.port,
                // A random port's archives could not be found again.
                dataDirectory: settings.dataDir ?? (settings.port == 0 ? nil : RelayConfiguration.defaultDataDirectory(application: "screenpub", environment: environment) + "/relay-\(settings.port)"),
                host: settings.host, publicURL: settings.publicURL,
                tls: settings.tlsCert.map { RelayTLSFiles(certificateChain: $0, privateKey: settings.tlsKey ?? "") })
            : nil
        // An empty path: no control socket (several shares on one machine, one of them controlled).
        controlSocket = settings.controlSocket.map { $0.isEmpty ? nil : $0 } ?? ControlSocket.defaultPath(application: "screenpub", environment: environment)
        captureRetry = settings.captureRetry > 0 ? settings.captureRetry : nil
        notifyChat = settings.notifyChat
        rendition = settings.rendition
        startupSettings = StartupSettings(settings)
    }

    /// `--backend auto` decided: PipeWire on a Wayland session (unless an X display or target was asked for),
    /// or when a node is given; X11 otherwise. Never `.auto`.
    static func resolvedBackend(_ settings: ShareSettings, environment: [String: String]) -> CaptureBackend {
        switch settings.backend {
        case .x11, .pipewire: return settings.backend
        case .auto:
            if settings.pipewireNode != nil { return .pipewire }
            if settings.display != nil || settings.monitor != nil || settings.window != nil || settings.region != nil { return .x11 }
            let wayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty || environment["XDG_SESSION_TYPE"] == "wayland"
            return wayland ? .pipewire : .x11
        }
    }

    /// Why window masks are refused for PipeWire capture; `wayland`: the backend was picked by `--backend auto` on
    /// a Wayland session.
    static func windowMaskRefusal(wayland: Bool) -> String {
        (wayland ? "--mask-window cannot be applied on this Wayland session: " : "--mask-window is for X11 capture: ")
            + "a Wayland screen cast names no windows, so nothing would be hidden. Share only the windows you mean to in the portal's dialog (--portal-source window), or hide an area with --mask-region"
    }

    /// The windows and regions to hide, parsed; throws naming the option and what is wrong.
    static func privacyMask(_ settings: ShareSettings) throws(PrivacyMaskError) -> PrivacyMask {
        var patterns: [WindowPattern] = []
        for text in settings.maskWindow {
            do { patterns.append(try WindowPattern(text)) } catch { throw PrivacyMaskError("--mask-window: \(error.description)") }
        }
        var regions: [PixelRect] = []
        for text in settings.maskRegion {
            do { regions.append(try PixelRect(maskRegion: text)) } catch { throw PrivacyMaskError("--mask-region: \(error.description)") }
        }
        return PrivacyMask(windowPatterns: patterns, regions: regions, style: settings.maskStyle)
    }

    /// The checks that need no parsing; `backend` is what `--backend` resolved to in the real environment.
    private static func check(
        _ settings: ShareSettings, backend: CaptureBackend, destinationKinds: [DestinationKind], isOpenDescriptor: (Int32) -> Bool
    ) throws(ShareError) {
        func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(ShareError) {
            if !condition { throw ShareError(.invalidSettings, message()) }
        }
        let s = settings
        try require(LogFormat(rawValue: s.logFormat) != nil, "--log-format must be text or json, got '\(s.logFormat)'")
        try require(s.fps > 0 && s.fps <= 120, "--fps must be more than 0 and at most 120, got \(s.fps.formatted(.number.grouping(.never)))")
        try require((50...100_000).contains(s.bitrate), "--bitrate must be between 50 and 100000 kbit/s, got \(s.bitrate)")
        try require((6...510).contains(s.audioBitrate), "--audio-bitrate must be between 6 and 510 kbit/s (Opus), got \(s.audioBitrate)")
        try require(!s.audio.contains(where: { $0.isWhitespace || $0.isNewline }), "--audio takes none, desktop, mic, or a PipeWire node id or node.name, got '\(s.audio)'")
        try require(!s.audioOptional || AudioInput(argument: s.audio) != nil, "--audio-optional goes with --audio desktop, mic or a node")
        if let threads = s.threads { try require((1...16).contains(threads), "--threads must be between 1 and 16") }
        if let layers = s.temporalLayers { try require((1...3).contains(layers), "--temporal-layers must be 1, 2 or 3, got \(layers)") }
        if let speed = s.speed {
            try require(s.codec != .auto, "--speed needs --codec av1, vp9 or vp8: each codec has its own range")
            let range = VideoEncoderConfiguration.speedRange(for: resolvedCodec(s))
            try require(range.contains(speed), "--speed for \(s.codec) must be between \(range.lowerBound) and \(range.upperBound)")
        }
        if let duration = s.duration { try require(duration > 0, "--duration must be positive") }
        if let keepalive = s.keepalive { try require(keepalive >= 0, "--keepalive must not be negative") }
        try require(s.captureRetry >= 0, "--capture-retry must not be negative")
        try require(s.portalTimeout > 0, "--portal-timeout must be positive")
        try require(s.pipewireRemote == nil || s.pipewireNode != nil, "--pipewire-remote needs --pipewire-node")
        if let remote = s.pipewireRemote {
            try require(isOpenDescriptor(remote), "--pipewire-remote \(remote) is not an open file descriptor")
        }
        try require(s.pipewireNode == nil || s.backend != .x11, "--pipewire-node needs --backend pipewire (or auto)")
        if backend == .pipewire {
            for (given, name) in [(s.monitor != nil, "--monitor"), (s.window != nil, "--window"), (s.region != nil, "--region"), (s.display != nil, "--display")] {
                try require(!given, "\(name) is for X11 capture; with PipeWire the portal's dialog picks what is shared (--portal-source)")
            }
            try require(s.maskWindow.isEmpty, Self.windowMaskRefusal(wayland: s.backend == .auto))
        }
        try require([s.monitor != nil, s.window != nil, s.region != nil].filter { $0 }.count <= 1, "give at most one of --monitor, --window and --region")
        try require(s.token == nil || s.server != nil || !s.to.isEmpty, "--token needs --server")
        if let server = s.server {
            try require(server.hasPrefix("http://") || server.hasPrefix("https://"), "--server must be an http:// or https:// URL, got '\(server)'")
        }
        for url in [s.output].compactMap({ $0 }) + s.to where ShareDestinations.kind(for: url, among: destinationKinds)?.name == .file {
            if let refusal = FileDestination.refusal(for: url, codec: resolvedCodec(s)) { throw ShareError(.invalidSettings, refusal) }
        }
        if s.chroma == .yuv444, let refusal = VideoEncoderConfiguration.chromaRefusal(codec: resolvedCodec(s), chroma: .yuv444) {
            throw ShareError(.invalidSettings, refusal)
        }
        if Self.publishesOverWHIP(s) {
            try require(s.chroma != .yuv444, "WHIP viewers (WebRTC) decode VP9 profile 0 only: give --chroma 420 (or auto) with a whip+ destination")
            try require(s.codec != .av1, "WHIP carries VP8, VP9 or H.264 (GStreamer 1.22 has no AV1 RTP payloader): give --codec vp9, vp8 or h264 with a whip+ destination")
        }
        for url in s.to {
            try require(ShareDestinations.kind(for: url, among: destinationKinds) != nil, "--to \(url): not a destination screenpub knows (\(ShareDestinations.schemes(among: destinationKinds).joined(separator: ", ")), or a file path)")
        }
        try require((0...65535).contains(s.port), "--port must be between 0 and 65535")
        try require((s.tlsCert == nil) == (s.tlsKey == nil), "--tls-cert and --tls-key go together: the certificate and its private key")
        let publishesElsewhere = s.output != nil || s.server != nil || !s.to.isEmpty
        for (given, name) in [(s.tlsCert != nil, "--tls-cert"), (s.host != RelayConfiguration.defaults.host, "--host"), (s.publicURL != nil, "--public-url")] {
            try require(!given || !publishesElsewhere, "\(name) is for the relay inside screenpub, which runs only without --server, --output and --to")
        }
        if let publicURL = s.publicURL {
            try require(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://"), "--public-url must be an http:// or https:// URL, got '\(publicURL)'")
        }
        if s.caFile != nil {
            do { try ClientTrust(caFile: s.caFile).validate() } catch { throw ShareError(.invalidSettings, "--ca-file: \(error.message)") }
        }
    }
}

extension ShareConfiguration {
    /// Whether a destination is a WHIP endpoint.
    static func publishesOverWHIP(_ s: ShareSettings) -> Bool {
        ([s.output, s.server].compactMap { $0 } + s.to).contains { ShareDestinations.kind(for: $0, among: ShareDestinations.all)?.name == .whip }
    }

    /// The codec `--codec` names; `auto` is AV1 up to 10 fps and VP9 above, and VP9 when a WHIP endpoint takes
    /// the stream (WebRTC here carries VP8 and VP9).
    static func resolvedCodec(_ s: ShareSettings) -> VideoCodec {
        s.codec == .auto && publishesOverWHIP(s) ? .vp9 : s.codec.resolved(framesPerSecond: s.fps)
    }

    /// The chroma format `--chroma` names; `auto` decides by codec, frame rate and bit rate (and then by the first
    /// picture), and is 4:2:0 for a WHIP endpoint (WebRTC negotiates VP9 profile 0).
    static func resolvedChroma(_ s: ShareSettings) -> (chroma: ChromaFormat, followsContent: Bool) {
        if s.chroma == .auto && publishesOverWHIP(s) { return (.yuv420, false) }
        return s.chroma.resolved(codec: resolvedCodec(s), framesPerSecond: s.fps, bitrateKbps: s.bitrate)
    }

    /// What `--monitor`, `--window` or `--region` name (the whole screen without them); throws naming the option.
    static func x11Target(_ s: ShareSettings) throws(ShareError) -> X11CaptureTarget {
        if let monitor = s.monitor {
            if let index = Int(monitor) {
                guard index >= 0 else { throw ShareError(.invalidSettings, "--monitor takes an index from 0 or a monitor's name, got \(index)") }
                return .monitor(index)
            }
            guard !monitor.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ShareError(.invalidSettings, "--monitor takes an index from 0 or a monitor's name (`screenpub --list-monitors`), got nothing")
            }
            return .monitorNamed(monitor)
        }
        if let window = s.window {
            if let id = parseWindowID(window) { return .window(id) }
            do {
                return .windowMatching(try WindowPattern(window))
            } catch {
                throw ShareError(
                    .invalidSettings, "--window takes a window id (decimal or 0x hex) or a glob matching one window's class or title: \(error.description)")
            }
        }
        if let region = s.region {
            guard let rect = PixelRect(parsing: region) else {
                throw ShareError(.invalidSettings, "--region must be X,Y,WIDTH,HEIGHT with non-negative numbers, got '\(region)'")
            }
            return .region(rect)
        }
        return .rootWindow
    }
}

func describe(_ target: X11CaptureTarget) -> String {
    switch target {
    case .rootWindow: "the screen"
    case .monitor(let index): "monitor \(index)"
    case .monitorNamed(let name): "monitor \(name)"
    case .window(let id): "window 0x\(String(id, radix: 16))"
    case .windowMatching(let pattern): "the window matching \"\(pattern)\""
    case .region(let rect): "region \(rect)"
    }
}

/// Parses a window id as xwininfo prints it: decimal or 0x-prefixed hex.
func parseWindowID(_ text: String) -> UInt? {
    let value = text.lowercased().hasPrefix("0x") ? UInt(text.dropFirst(2), radix: 16) : UInt(text)
    return value.flatMap { $0 == 0 ? nil : $0 }
}
