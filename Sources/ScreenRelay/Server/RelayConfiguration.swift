import Foundation
import ScreenMedia
public import ScreenTransport

/// How a relay listens and authenticates.
public struct RelayConfiguration: Sendable {
    /// Address to listen on; the default serves this machine only.
    public var host: String
    /// TCP port; 0 picks a free one (see ``RelayServer/waitUntilListening()``).
    public var port: Int
    /// Signs tokens and guards the session API. At least 32 bytes; never logged.
    public var secret: String
    /// How clients reach the relay (`http://host:port`), used in the URLs it hands out; nil derives it from
    /// the listening address.
    public var publicURL: String?
    /// Further names the relay answers to (a request with another `Host` gets 421, a WebSocket from a page of
    /// another origin is refused): a reverse proxy's public name, say. Loopback, this machine's addresses and host
    /// name, and the host of ``publicURL`` are always allowed.
    public var allowedHosts: [String] = []
    /// Whether clients whose token has the publisher role may send signals (chat); subscribers and
    /// moderators always may.
    public var publishersMaySignal: Bool
    /// Where archives and their index live; nil: this relay does not record (the archive API answers 503).
    public var dataDirectory: String?
    /// Seconds a recorded session may have no stream before its archive stops by itself.
    public var archiveGraceSeconds: Double
    /// On SIGTERM: recordings are finished, then clients have this long to close before they are dropped.
    public var shutdownGraceSeconds = 10.0
    /// How much disk recordings may take, and the free space they leave (``ArchiveLimits``).
    public var archiveLimits = ArchiveLimits()
    /// What each session's router allows (``RouterLimits``, whose defaults are the relay's): the properties below
    /// that name a subscriber's, a connection's, a stream's or a token's bound read and write it.
    public var routerLimits = RouterLimits()
    /// Control messages (signals, announcements) one connection may have waiting to be written; past this,
    /// or past ``maximumQueuedControlBytes``, it is closed: it does not read what it is sent.
    public var maximumQueuedControlMessages = 1024
    public var maximumQueuedControlBytes = 4 << 20
    /// Everything one connection may have waiting to be written (media, control messages, its close), in bytes:
    /// past it, it is closed, as one that does not read. 16 MiB: four subscriptions' media at the router's bound
    /// (``RouterLimits/maximumQueuedBytes``, where a subscription is thinned and skipped long before), and its
    /// control messages.
    public var maximumQueuedBytes = RelayConfiguration.defaultMaximumQueuedBytes
    public static let defaultMaximumQueuedBytes = 16 << 20
    /// What all connections together may have queued, counted as ``maximumQueuedBytes`` counts it (a frame queued
    /// for many subscribers counts once for each): past it, a connection holding more than its share is closed
    /// (``QueuedBytesBudget``).
    public var maximumRelayQueuedBytes = QueuedBytesBudget.defaultCeiling
    /// Media one subscriber may have queued, in milliseconds at its measured drain rate: past
    /// ``subscriberThinMilliseconds`` it gets fewer temporal layers; a layer-0 frame past
    /// ``subscriberQueueMilliseconds`` makes it skip to a keyframe, which it makes the publisher send at most once
    /// per ``subscriberKeyframeIntervalSeconds``. One that takes nothing for ``subscriberStallSeconds`` is closed.
    public var subscriberThinMilliseconds: Double {
        get { routerLimits.thinAboveMilliseconds }
        set { routerLimits.thinAboveMilliseconds = newValue }
    }
    public var subscriberQueueMilliseconds: Double {
        get { routerLimits.maximumQueuedMilliseconds }
        set { routerLimits.maximumQueuedMilliseconds = newValue }
    }
    /// A thinned subscriber is still sent a discardable frame of a layer above its own when its link would carry
    /// it, behind what it has queued, within this many milliseconds and before the next layer-0 frame (0: never).
    public var subscriberFitInMilliseconds: Double {
        get { routerLimits.fitInMilliseconds }
        set { routerLimits.fitInMilliseconds = newValue }
    }
    public var subscriberKeyframeIntervalSeconds: Double {
        get { routerLimits.subscriberKeyframeIntervalSeconds }
        set { routerLimits.subscriberKeyframeIntervalSeconds = newValue }
    }
    /// Keyframes asked on subscribers' behalf come at most once per this many seconds after a stream's last
    /// keyframe; one subscriber's own requests are served ``subscriberKeyframeRequests`` per 10 s
    /// (``StreamRouter/Limits``).
    public var subscriberKeyframeCeilingSeconds: Double {
        get { routerLimits.subscriberKeyframeCeilingSeconds }
        set { routerLimits.subscriberKeyframeCeilingSeconds = newValue }
    }
    public var subscriberKeyframeRequests: Int {
        get { routerLimits.keyframeRequestsPerSubscriber }
        set { routerLimits.keyframeRequestsPerSubscriber = newValue }
    }
    public var subscriberStallSeconds: Double {
        get { routerLimits.stallSeconds }
        set { routerLimits.stallSeconds = newValue }
    }
    /// Signals one connection may send per second on average, and in a burst; past them they are refused.
    public var signalsPerSecond: Double {
        get { routerLimits.signalsPerSecond }
        set { routerLimits.signalsPerSecond = newValue }
    }
    public var signalBurst: Double {
        get { routerLimits.signalBurst }
        set { routerLimits.signalBurst = newValue }
    }
    /// Signals a session's connections may send together per second (twice as many at once).
    public var sessionSignalsPerSecond: Double {
        get { routerLimits.sessionSignalsPerSecond }
        set { routerLimits.sessionSignalsPerSecond = newValue }
    }
    /// PEM certificate chain and key: the relay serves HTTPS and WSS; nil: plain HTTP and WS.
    public var tls: RelayTLSFiles?
    /// TCP connections the relay keeps open at once (kept below its descriptor limit), and from one address
    /// (loopback, where a reverse proxy connects from, has no per-address cap).
    public var maximumConnections = 10_000
    public var maximumConnectionsPerAddress = 64
    /// Seconds a request's head has to arrive whole: the first from the connection's start (TLS handshake
    /// included), a later one on a kept-alive connection from its first byte. Slower ones are closed.
    public var requestHeadTimeoutSeconds = 10.0
    /// Bytes of a request line (past them: 414) and of a request's header fields together (past them: 431), as
    /// nginx's `large_client_header_buffers 4 8k`; the relay holds no more of an unfinished head.
    public var maximumRequestLineBytes = 8 << 10
    public var maximumRequestHeaderBytes = 32 << 10
    /// Seconds an HTTP connection may sit between requests; a WebSocket is pinged every half of it and
    /// closed when a ping goes unanswered.
    public var idleTimeoutSeconds = 60.0
    /// Largest message before hello, and from a subscriber or moderator (they send only control messages).
    public var maximumControlMessageSize = 64 << 10
    /// Seconds a message split across frames may take to arrive whole.
    public var messageDeadlineSeconds = 30.0
    /// Sessions that may exist at once; a session with no client and no recording for
    /// ``emptySessionExpirySeconds`` is removed.
    public var maximumSessions = 1000
    public var emptySessionExpirySeconds = 6 * 3600.0
    /// Streams one connection may publish at once, and the longest stream name in bytes.
    public var maximumStreamsPerConnection: Int {
        get { routerLimits.maximumStreamsPerConnection }
        set { routerLimits.maximumStreamsPerConnection = newValue }
    }
    /// Streams a session holds at once (at most 32, so that a welcome fits a control message), and the video
    /// frames one stream may send per second (``StreamRouter/Limits``).
    public var maximumStreamsPerSession: Int {
        get { routerLimits.maximumStreamsPerSession }
        set { routerLimits.maximumStreamsPerSession = newValue }
    }
    public var maximumFramesPerSecond: Double {
        get { routerLimits.maximumFramesPerSecond }
        set { routerLimits.maximumFramesPerSecond = newValue }
    }
    /// What one token's connections may hold together (``TokenShares``): connections (publisher and moderator
    /// tokens; viewer tokens are links handed to an audience), streams; and a session's connections.
    public var maximumConnectionsPerToken: Int {
        get { routerLimits.tokenShares.connectionsPerToken }
        set { routerLimits.tokenShares.connectionsPerToken = newValue }
    }
    public var maximumStreamsPerToken: Int {
        get { routerLimits.tokenShares.streamsPerToken }
        set { routerLimits.tokenShares.streamsPerToken = newValue }
    }
    /// Connections one viewer token may hold in a session (``TokenShares/Limits/viewerConnectionsPerToken``: size
    /// it for the audience one link is handed to), and the seats of a session kept for publisher and moderator
    /// tokens (``TokenShares/Limits/reservedSeats``).
    public var maximumViewerConnectionsPerToken: Int {
        get { routerLimits.tokenShares.viewerConnectionsPerToken }
        set { routerLimits.tokenShares.viewerConnectionsPerToken = newValue }
    }
    public var reservedSeats: Int {
        get { routerLimits.tokenShares.reservedSeats }
        set { routerLimits.tokenShares.reservedSeats = newValue }
    }
    /// Addresses of reverse proxies whose `Forwarded` / `X-Forwarded-For` the relay believes: a WebSocket that
    /// comes through one counts, for ``maximumConnectionsPerAddress``, as from the client it names
    /// (``ForwardedClient``). Empty: none is believed.
    public var trustedProxies: [String] = []
    public var maximumConnectionsPerSession: Int {
        get { routerLimits.tokenShares.connectionsPerSession }
        set { routerLimits.tokenShares.connectionsPerSession = newValue }
    }
    /// HLS segments one session keeps in memory; the relay's budget for all (``hlsRelayMemoryBytes``) is 8 times it.
    public var hlsSessionMemoryBytes = 64 << 20
    /// 512 MiB by default: 8 sessions at their own budget, or many more at the sizes screen content has (a 6 s
    /// segment of 1080p text at 1.5 Mbit/s is about 1 MB).
    public var hlsRelayMemoryBytes: Int { 8 * hlsSessionMemoryBytes }
    public var maximumStreamNameBytes: Int {
        get { routerLimits.maximumStreamNameBytes }
        set { routerLimits.maximumStreamNameBytes = newValue }
    }
    /// When set, `/metrics` answers only `Authorization: Bearer <this>`.
    public var metricsToken: String?
    /// HLS (`/hls/{session}/index.m3u8`): segments of about this many seconds, each starting at a keyframe
    /// (the stream's own past half of it, else one the relay asks for), cut into LL-HLS parts of about
    /// ``hlsPartSeconds``; packaging stops ``hlsIdleSeconds`` after the last request.
    public var hlsSegmentSeconds = 6.0
    public var hlsPartSeconds = 0.5
    public var hlsIdleSeconds = 60.0
    /// LL-HLS requests one client (a token from one address) may have waiting for a part at once, of the 500 a
    /// session lets wait: one more is answered 503 with `Retry-After` at once. A player needs one or two (its
    /// blocking playlist reload and the hinted part). Behind a reverse proxy named in ``trustedProxies`` the address
    /// is the client's it forwards; behind another, every client has the proxy's, and viewers sharing a token
    /// through it share this too.
    public var hlsWaitingRequestsPerClient = 4
    /// Also write every session's HLS to `DIRECTORY/{session}/` (for a web server or CDN), from its first frame.
    public var hlsDirectory: String?
    /// Also send every session's HLS to this HTTP origin (`PUT`/`DELETE` under `URL/{session}/`).
    public var hlsPushURL: String?
    /// The HTTP client the push goes through (required with ``hlsPushURL``); one with a 10 s timeout suits.
    public var hlsPushClient: (any HTTPUploader)?

    public init(
        host: String = "127.0.0.1", port: Int = 8090, secret: String, publicURL: String? = nil, publishersMaySignal: Bool = true,
        dataDirectory: String? = nil, archiveGraceSeconds: Double = 10
    ) {
        self.host = host
        self.port = port
        self.secret = secret
        self.publicURL = publicURL
        self.publishersMaySignal = publishersMaySignal
        self.dataDirectory = dataDirectory
        self.archiveGraceSeconds = archiveGraceSeconds
    }

    /// The defaults of every setting (its secret empty): what a command's options start from, so that each default
    /// is written once, here.
    public static var defaults: RelayConfiguration { RelayConfiguration(secret: "") }

    /// `$XDG_STATE_HOME/NAME`, else `~/.local/state/NAME` (the XDG base directory rules), in `environment`
    /// (default: this process's).
    public static func defaultDataDirectory(application: String, environment: [String: String]? = nil) -> String {
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/" + application }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/" + application
    }
}
