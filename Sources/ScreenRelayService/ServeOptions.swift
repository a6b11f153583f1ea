public import ArgumentParser
import Foundation
import ScreenRelay
import ScreenService

/// `screenrelay serve`'s options: every bound and setting of the relay as the command line, `SCREENRELAY_*` and
/// config.toml give it (each default is ``RelayConfiguration``'s, ``ArchiveLimits``' or ``RouterLimits``'), and
/// the sentences that refuse values it cannot run with.
public struct ServeOptions: ParsableArguments {
    static let routerDefaults = RouterLimits()

    public init() {}

    @Option(help: "Address to listen on.")
    public var host = RelayConfiguration.defaults.host

    @Option(help: "TCP port (0: any free port).")
    public var port = RelayConfiguration.defaults.port

    @Option(help: "File holding the relay secret (default: $SCREENRELAY_SECRET, else $XDG_CONFIG_HOME/screenrelay/secret if it exists).")
    public var secretFile: String?

    @Option(help: "The URL clients use to reach this relay (e.g. behind a TLS proxy); else links use the Host a client asked for, or this machine's address when listening on 0.0.0.0.")
    public var publicURL: String?

    @Option(help: "Another name this relay answers to (repeatable): requests with any other Host are refused (421), and WebSockets from pages of other sites. Loopback, this machine's addresses and host name, and --public-url's host are always answered.")
    public var allowedHost: [String] = []

    @Option(help: "PEM certificate chain: serve HTTPS and WSS (with --tls-key). SIGHUP reads both again; open connections keep theirs.")
    public var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert.")
    public var tlsKey: String?

    @Option(help: "Connections kept open at once (kept below the descriptor limit); past it new ones are closed at once.")
    public var maxConnections = RelayConfiguration.defaults.maximumConnections

    @Option(help: "Connections kept open from one IP address (loopback — a reverse proxy on this machine — has no cap).")
    public var maxConnectionsPerAddress = RelayConfiguration.defaults.maximumConnectionsPerAddress

    @Option(help: "Sessions that may exist at once; POST /session answers 503 past it.")
    public var maxSessions = RelayConfiguration.defaults.maximumSessions

    @Option(help: "Seconds a session may have no client and no recording before it is removed.")
    public var emptySessionExpiry = RelayConfiguration.defaults.emptySessionExpirySeconds

    @Option(help: "Seconds an HTTP connection may sit idle between requests; WebSockets are pinged every half of it and closed when a ping goes unanswered.")
    public var idleTimeout = RelayConfiguration.defaults.idleTimeoutSeconds

    @Option(help: "Seconds a request's head has to arrive whole: the first from the connection's start (TLS handshake included), a later one on a kept-alive connection from its first byte; slower ones are closed.")
    public var requestTimeout = RelayConfiguration.defaults.requestHeadTimeoutSeconds

    @Option(help: "Largest request line (bytes); longer ones are answered 414 and closed.")
    public var maxRequestLine = RelayConfiguration.defaults.maximumRequestLineBytes

    @Option(help: "Largest request header fields, all together (bytes); larger ones are answered 431 and closed.")
    public var maxRequestHeaders = RelayConfiguration.defaults.maximumRequestHeaderBytes

    @Option(help: "Seconds a WebSocket message sent in fragments may take to arrive whole; slower ones close the connection (1008).")
    public var messageDeadline = RelayConfiguration.defaults.messageDeadlineSeconds

    @Option(help: "Largest message (bytes) before hello, and from viewers and moderators (they send only control messages); larger ones close the connection (1009).")
    public var maxControlMessage = RelayConfiguration.defaults.maximumControlMessageSize

    @Option(help: "Control messages and bytes of them that may wait to be written to one connection; past either it is closed (it does not read).")
    public var maxQueuedMessages = RelayConfiguration.defaults.maximumQueuedControlMessages

    @Option(help: "See --max-queued-messages.")
    public var maxQueuedControlBytes = RelayConfiguration.defaults.maximumQueuedControlBytes

    @Option(help: "Bytes of everything (media, control messages) that may wait to be written to one connection; past it, it is closed (it does not read). A viewer's media is thinned and skipped by the router well before (4 MiB a subscription).")
    public var maxQueuedBytes = RelayConfiguration.defaults.maximumQueuedBytes

    @Option(help: "Bytes all connections together may have queued (a frame queued for many viewers counts once for each); past it, a connection holding more than its share is closed.")
    public var maxRelayQueuedBytes = RelayConfiguration.defaults.maximumRelayQueuedBytes

    @Option(help: "Milliseconds of media (at its measured rate) a viewer may have queued before it is sent fewer temporal layers: a lower frame rate that its link carries.")
    public var subscriberThin: Double = Self.routerDefaults.thinAboveMilliseconds

    @Option(help: "Milliseconds of media a viewer may have queued before it skips to the next keyframe (when even the lowest layer does not fit).")
    public var subscriberQueue: Double = Self.routerDefaults.maximumQueuedMilliseconds

    @Option(help: "Milliseconds within which a thinned viewer's link must carry a frame of a layer it is not sent, behind what it has queued, for that frame to go to it all the same (only from publishers whose higher-layer frames are discardable; never delaying the next layer-0 frame). 0: never.")
    public var subscriberFitIn: Double = Self.routerDefaults.fitInMilliseconds

    @Option(help: "Seconds between keyframes one viewer may make the publisher send (the stream as a whole: at most two a second).")
    public var subscriberKeyframeInterval: Double = Self.routerDefaults.subscriberKeyframeIntervalSeconds

    @Option(help: "MiB one recording may write (its files together); it stops there, finished and playable.")
    public var archiveMaxSize = Self.mebibytes(ArchiveLimits().recordingBytes)

    @Option(help: "MiB one session's archives may take together; past it no recording starts (507) and one in progress stops.")
    public var archiveSessionQuota = Self.mebibytes(ArchiveLimits().sessionBytes)

    @Option(help: "MiB all the relay's archives may take together; past it no recording starts (507) and one in progress stops.")
    public var archiveQuota = Self.mebibytes(ArchiveLimits().relayBytes)

    @Option(help: "MiB recordings leave free on the data directory's disk: below it none starts (507) and one in progress stops.")
    public var archiveFreeSpace = Self.mebibytes(ArchiveLimits().freeSpaceBytes)

    @Option(help: "Seconds SIGTERM or SIGINT waits for clients to close, once recordings are finished, before the relay cuts their connections and exits.")
    public var shutdownGrace = RelayConfiguration.defaults.shutdownGraceSeconds

    @Option(help: "Seconds after a stream's last keyframe before a keyframe is asked of its publisher for viewers (joiners the cached pictures cannot start, viewers that fell behind or whose decoder failed): no viewer makes the others pay for keyframes more often. Keyframes for a recording or HLS are not under it.")
    public var subscriberKeyframeCeiling: Double = Self.routerDefaults.subscriberKeyframeCeilingSeconds

    @Option(help: "Keyframe requests one viewer may make per 10 s: each is answered from the cached pictures when they can start it, else by a keyframe under --subscriber-keyframe-ceiling; past them they wait, and a viewer that goes on asking (40 with none answered) is closed.")
    public var subscriberKeyframeRequests: Int = Self.routerDefaults.keyframeRequestsPerSubscriber

    @Option(help: "Seconds a viewer may take none of its queued media before it is closed (it stopped reading, whether or not it answers pings).")
    public var subscriberStall: Double = Self.routerDefaults.stallSeconds

    @Option(help: "Signals (chat) a whole session's connections may send together per second (twice as many at once): each goes to everyone, so this bounds what many connections of one token could make the relay deliver.")
    public var sessionSignalsPerSecond: Double = Self.routerDefaults.sessionSignalsPerSecond

    @Option(help: "Signals (chat) one connection may send per second on average…")
    public var signalsPerSecond: Double = Self.routerDefaults.signalsPerSecond

    @Option(help: "…and at once; past them a signal is refused (invalidSignal).")
    public var signalBurst: Double = Self.routerDefaults.signalBurst

    @Option(help: "Streams one connection may publish at once.")
    public var maxStreamsPerConnection = Self.routerDefaults.maximumStreamsPerConnection

    @Option(help: "Streams one session holds at once, whoever publishes them (at most 32: with them, every joiner's welcome fits a control message).")
    public var maxStreamsPerSession = Self.routerDefaults.maximumStreamsPerSession

    @Option(help: "Streams the connections of one token publish at once, together: one token cannot keep the others of its session from publishing.")
    public var maxStreamsPerToken = Self.routerDefaults.tokenShares.streamsPerToken

    @Option(help: "Connections one publisher or moderator token may hold in a session at once. A token's connections together also send at most --signals-per-second signals and twice --max-frames-per-second frames.")
    public var maxConnectionsPerToken = RelayConfiguration.defaults.maximumConnectionsPerToken

    @Option(help: "Connections one viewer token may hold in a session at once: a viewer link may be shared, so size it for the audience one link is handed to (one connection a viewer, two briefly while it reconnects), or hand each group a token of its own.")
    public var maxViewerConnectionsPerToken = RelayConfiguration.defaults.maximumViewerConnectionsPerToken

    @Option(help: "Connections one session holds at once, all roles together.")
    public var maxConnectionsPerSession = RelayConfiguration.defaults.maximumConnectionsPerSession

    @Option(help: "Of --max-connections-per-session, the seats only publisher and moderator tokens may take: however many viewers come, the presenter can reconnect and a moderator join.")
    public var reservedSeats = RelayConfiguration.defaults.reservedSeats

    @Option(help: "The address of a reverse proxy whose Forwarded / X-Forwarded-For headers are believed (repeat for more): WebSockets through it count, for --max-connections-per-address, as from the client it names.")
    public var trustProxy: [String] = []

    @Option(help: "Video frames one stream may send per second (twice as many at once); audio frames: 200 a second. Past it frames are refused.")
    public var maxFramesPerSecond: Double = Self.routerDefaults.maximumFramesPerSecond

    @Option(help: "MiB of HLS segments one session keeps in memory (the relay's budget for all: 8 times it); past it the oldest go first.")
    public var hlsSessionMemory = RelayConfiguration.defaults.hlsSessionMemoryBytes >> 20

    @Option(help: "Longest stream name, in bytes.")
    public var maxStreamName = Self.routerDefaults.maximumStreamNameBytes

    @Option(help: "Serve /metrics to whoever shows `Authorization: Bearer TOKEN`; without it, /metrics is served to this machine only (also $SCREENRELAY_METRICS_TOKEN or metrics-token in the config file, which keep it out of the process list).")
    public var metricsToken: String?

    @Option(help: "Length of HLS segments (/hls/{session}/index.m3u8), in seconds: each starts at a keyframe, the stream's own when one comes past half of it, else one the relay asks for, which every live viewer of the stream gets too (at 6 s, ten a minute at most).")
    public var hlsSegment = RelayConfiguration.defaults.hlsSegmentSeconds

    @Option(help: "Length of LL-HLS parts within segments, in seconds (0.1 to 2, at most half a segment; default 0.5, or half a shorter segment): a part needs no keyframe; LL-HLS players play about two parts behind the frames.")
    public var hlsPart: Double?

    @Option(help: "LL-HLS requests (blocking playlist reloads, hinted parts) one client — a token from one address — may have waiting at once, of the 500 a session lets wait; one more is answered 503 with Retry-After. A player needs one or two. Behind a reverse proxy, give it with --trust-proxy so that each client it forwards has its own share.")
    public var hlsWaitingPerClient = RelayConfiguration.defaults.hlsWaitingRequestsPerClient

    @Option(help: "Also write every session's HLS to DIR/<session>/ (index.m3u8, segments), for nginx or a CDN to serve; kept on while streams last.")
    public var hlsDir: String?

    @Option(help: "Also send every session's HLS to this HTTP origin: PUT URL/<session>/<file> for each new file, DELETE for segments that left the window (as ffmpeg's -method PUT); kept on while streams last.")
    public var hlsPush: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Let clients whose token has the publisher role send signals (chat); --no-publisher-signals refuses them (a publish-only screen).")
    public var publisherSignals = RelayConfiguration.defaults.publishersMaySignal

    @Option(help: "Directory for archives and their index (default: $XDG_STATE_HOME/screenrelay, else ~/.local/state/screenrelay).")
    public var dataDir: String?

    @Option(help: "Seconds a recorded session may have no published stream before its archive stops by itself.")
    public var archiveGrace = RelayConfiguration.defaults.archiveGraceSeconds

    @Option(help: "Read settings from this TOML file instead of $XDG_CONFIG_HOME/screenrelay/config.toml.")
    public var config: String?

    @Option(help: "Log lines on standard error: text (what journald shows as is) or json (one object per line).")
    public var logFormat = "text"

    @Flag(name: .shortAndLong, help: "Log more detail.")
    public var verbose = false

    /// Refuses what cannot run, in a sentence naming the options (`ValidationError`). The command's `validate()`
    /// calls it: ArgumentParser says an option group's own refusal of an empty command line as the whole help.
    public func check() throws {
        guard LogFormat(rawValue: logFormat) != nil else { throw ValidationError("--log-format must be text or json, got '\(logFormat)'") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
        guard archiveGrace >= 0 else { throw ValidationError("--archive-grace must not be negative") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together: the certificate and its private key") }
        if let address = trustProxy.first(where: { !RelayConfiguration.isProxyAddress($0) }) {
            throw ValidationError("--trust-proxy takes the proxy's IP address as the relay sees it (e.g. 127.0.0.1), got '\(address)'")
        }
        guard maxConnections > 0, maxConnectionsPerAddress > 0, maxSessions > 0 else {
            throw ValidationError("--max-connections, --max-connections-per-address and --max-sessions must be positive")
        }
        guard requestTimeout > 0, messageDeadline > 0, maxControlMessage >= 1024, maxQueuedMessages > 0, maxQueuedControlBytes >= 65536,
            maxQueuedBytes >= maxQueuedControlBytes, maxRelayQueuedBytes >= maxQueuedBytes,
            signalsPerSecond > 0, signalBurst >= 1, maxStreamsPerConnection > 0, maxStreamName > 0, subscriberThin > 0,
            subscriberQueue >= subscriberThin, subscriberFitIn >= 0, subscriberKeyframeInterval > 0, subscriberStall > 0,
            subscriberKeyframeCeiling >= 0, subscriberKeyframeRequests > 0, sessionSignalsPerSecond > 0,
            (1...32).contains(maxStreamsPerSession), maxStreamsPerToken > 0, maxConnectionsPerToken > 0, maxConnectionsPerSession > 0,
            maxViewerConnectionsPerToken > 0, (0..<maxConnectionsPerSession).contains(reservedSeats),
            maxFramesPerSecond >= 1, maxFramesPerSecond <= 10_000, (1...65_536).contains(hlsSessionMemory)
        else {
            throw ValidationError(
                "the limits must be positive (--max-streams-per-session at most 32, --max-frames-per-second at most 10000, --max-control-message at least 1024, --max-queued-control-bytes at least 65536, --max-queued-bytes at least that, --max-relay-queued-bytes at least --max-queued-bytes, --subscriber-queue at least --subscriber-thin, --subscriber-fit-in 0 or more)")
        }
        guard archiveMaxSize > 0, archiveSessionQuota > 0, archiveQuota > 0, archiveFreeSpace >= 0,
            [archiveMaxSize, archiveSessionQuota, archiveQuota, archiveFreeSpace].allSatisfy({ $0 <= 1 << 30 })
        else {
            throw ValidationError("--archive-max-size, --archive-session-quota and --archive-quota must be positive MiB, --archive-free-space 0 or more")
        }
        guard shutdownGrace >= 0, shutdownGrace <= 3600 else { throw ValidationError("--shutdown-grace must be 0 to 3600 seconds") }
        guard emptySessionExpiry > 0, idleTimeout >= 2 else {
            throw ValidationError("--empty-session-expiry must be positive and --idle-timeout at least 2 seconds")
        }
        guard (256...(1 << 20)).contains(maxRequestLine), (1024...(1 << 20)).contains(maxRequestHeaders) else {
            throw ValidationError("--max-request-line must be 256 to 1048576 bytes and --max-request-headers 1024 to 1048576")
        }
        guard (1...500).contains(hlsWaitingPerClient) else {
            throw ValidationError("--hls-waiting-per-client must be 1 to 500, got \(hlsWaitingPerClient)")
        }
        if let hlsPush, !(hlsPush.hasPrefix("http://") || hlsPush.hasPrefix("https://")) {
            throw ValidationError("--hls-push must be an http:// or https:// URL, got '\(hlsPush)'")
        }
        guard hlsSegment >= 0.5 && hlsSegment <= 30 else {
            throw ValidationError("--hls-segment must be between 0.5 and 30 seconds, got \(hlsSegment)")
        }
        if let hlsPart, !(hlsPart >= 0.1 && hlsPart <= 2 && hlsPart <= hlsSegment / 2) {
            throw ValidationError("--hls-part must be between 0.1 and 2 seconds and at most half of --hls-segment (\(hlsSegment) s), got \(hlsPart)")
        }
        if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
            throw ValidationError("--public-url must be an http:// or https:// URL, got '\(publicURL)'")
        }
    }

    /// Whole MiB of `bytes`, as the archive options take them.
    static func mebibytes(_ bytes: Int64) -> Int { Int(bytes >> 20) }
}
