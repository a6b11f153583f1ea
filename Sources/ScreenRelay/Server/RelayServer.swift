import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
public import Logging
import NIOCore
import NIOWebSocket
public import ScreenTransport
public import ServiceLifecycle
public import ScreenWire
public import ScreenMedia

/// screenrelay: the session server. HTTP API for sessions and tokens, one WebSocket per client at `/ws`, the
/// fan-out of every session's streams, `/healthz` and `/metrics`. A ServiceLifecycle service: graceful shutdown
/// stops accepting, closes connections and returns. It makes the parts every request shares and builds its router
/// from the route groups (``RelayRoutes``), each given only what it uses.
public final class RelayServer: Service {
    public let configuration: RelayConfiguration
    public let metrics: RelayMetrics
    let logger: Logger
    let registry: SessionRegistry
    /// How every session's HLS is packaged, whether a player started it or it is written out from the first frame.
    let hlsConfiguration: HLSPackager.Configuration
    let tokens: TokenAuthority
    let viewer = ViewerAssets()
    let archives: ArchiveManager?
    /// The per-address cap of the WebSockets a trusted proxy forwards (``WebSocketRoutes``).
    let forwardedClients: ConnectionGate
    /// What all connections have queued, and its ceiling (``RelayConfiguration/maximumRelayQueuedBytes``).
    let queuedBytes: QueuedBytesBudget
    /// Rates of the API calls that make the relay work for a client (markers, archive starts and stops).
    let requestRates = RequestRateLimiter()
    /// The channels of the connections accepted that still exist (closed ones must go: ``ChannelCensus``).
    let channelCensus = ChannelCensus()
    /// Sessions and archives across restarts; nil without a data directory.
    let store: RelayStore?
    /// The certificate new connections get; nil: plain HTTP.
    private let tlsContext: ServerTLSContext?
    private let listeningPort = ListeningPort()
    /// Makes sessions and mints their tokens (the API and ``openSession(connectionData:title:)``).
    private let sessions: SessionIssuer
    /// Serves each client, over `/ws` or in process.
    private let connections: ConnectionDriver
    /// The URLs the relay gives out.
    private var links: RelayLinks {
        RelayLinks(publicURL: configuration.publicURL, host: configuration.host, scheme: tlsContext == nil ? "http" : "https", port: listeningPort)
    }

    /// `metrics`: where it counts (its own by default; one given may also report elsewhere, see
    /// ``RelayMetrics/init(alsoReportingTo:)``).
    public init(configuration: RelayConfiguration, logger: Logger, metrics: RelayMetrics = RelayMetrics()) async throws {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        let queuedBytes = QueuedBytesBudget(ceiling: configuration.maximumRelayQueuedBytes)
        self.queuedBytes = queuedBytes
        // Changed by every frame queued or written: read when the metrics are rendered, not reported each time.
        metrics.sample(.queuedBytes) { queuedBytes.queuedBytes }
        forwardedClients = ConnectionGate(limits: .init(total: .max, perAddress: configuration.maximumConnectionsPerAddress))
        if configuration.hlsPushURL != nil, configuration.hlsPushClient == nil {
            throw RelayError(.badRequest, "an HLS push needs the HTTP client to send it with (RelayConfiguration.hlsPushClient)")
        }
        let hls = HLSPackager.Configuration(
            segmentSeconds: configuration.hlsSegmentSeconds, partSeconds: configuration.hlsPartSeconds, idleSeconds: configuration.hlsIdleSeconds,
            directory: configuration.hlsDirectory, pushURL: configuration.hlsPushURL, pushClient: configuration.hlsPushClient,
            logger: logger, sessionMemoryBytes: configuration.hlsSessionMemoryBytes,
            relayMemory: HLSMemoryBudget(limit: configuration.hlsRelayMemoryBytes), metrics: metrics)
        hlsConfiguration = hls
        var limits = configuration.routerLimits
        // A welcome must fit a control message whatever was configured; a token's connections together send as
        // many signals as one connection, as many frames as two streams.
        limits.maximumStreamsPerSession = min(32, limits.maximumStreamsPerSession)
        limits.tokenShares.signalsPerSecond = limits.signalsPerSecond
        limits.tokenShares.videoFramesPerSecond = 2 * limits.maximumFramesPerSecond
        self.registry = SessionRegistry(
            metrics: metrics, limits: limits,
            publishersMaySignal: configuration.publishersMaySignal,
            archiveGrace: .milliseconds(Int(configuration.archiveGraceSeconds * 1000)),
            alwaysHLS: hls.isWrittenOut ? hls : nil)
        self.tokens = try await TokenAuthority(secret: configuration.secret)
        tlsContext = try configuration.tls.map { files throws(RelayError) in try ServerTLSContext(files: files) }
        if let dataDirectory = configuration.dataDirectory {
            let store = try RelayStore(dataDirectory: dataDirectory)
            self.store = store
            archives = try ArchiveManager(store: store, registry: registry, logger: logger, limits: configuration.archiveLimits, metrics: metrics)
            let known = try store.sessions(createdAfter: Date().addingTimeInterval(-TokenAuthority.maximumLifetime))
            for session in known { _ = await registry.create(id: session.id, title: session.title, createdAt: session.createdAt) }
            if !known.isEmpty { logger.info("\(known.count) session(s) restored from \(dataDirectory)") }
        } else {
            store = nil
            archives = nil
        }
        if !ReachableAddress.isLoopback(configuration.host), configuration.tls == nil, !(configuration.publicURL ?? "").hasPrefix("https://") {
            logger.warning(
                "listening on \(configuration.host) without TLS: browsers on other machines offer the viewer's WebCodecs only on https pages (give --tls-cert and --tls-key, or put a TLS proxy in front and give --public-url https://…)")
        }
        if configuration.publicURL == nil, ReachableAddress.isWildcard(configuration.host) {
            if let address = ReachableAddress.networkAddress() {
                logger.notice(
                    "listening on \(configuration.host): links made without a Host to go by name this machine as \(address); if others reach it by another name or through a proxy, give --public-url")
            } else {
                logger.warning(
                    "listening on \(configuration.host) but this machine has no network address to put in links: they name 127.0.0.1, which works only here; give --public-url with the address others use")
            }
        }
        sessions = SessionIssuer(
            registry: registry, tokens: tokens, store: store, metrics: metrics, logger: logger, maximumSessions: configuration.maximumSessions,
            emptySessionExpirySeconds: configuration.emptySessionExpirySeconds)
        connections = ConnectionDriver(
            registry: registry, tokens: tokens, metrics: metrics,
            outletLimits: .init(
                messages: configuration.maximumQueuedControlMessages, controlBytes: configuration.maximumQueuedControlBytes,
                bytes: configuration.maximumQueuedBytes),
            queuedBytes: queuedBytes, unreadClientsLog: RateLimitedLog(logger: logger))
        if viewer.directory == nil {
            logger.warning("the browser viewer's files were not found (looked in \(viewer.searched.joined(separator: ", "))); /view will answer 500")
        }
    }

    /// The port the relay listens on, once it does; throws ``RelayError`` (`.cannotListen`) if it never will.
    public func waitUntilListening() async throws -> Int {
        try await listeningPort.wait()
    }

    /// Reads the TLS certificate and key again (SIGHUP): connections from now on get the renewed certificate,
    /// open ones keep theirs. Returns what to log; a failure keeps the certificate in use.
    public func reloadCertificate() -> Result<String, RelayError> {
        guard let tlsContext else { return .success("no TLS certificate to reload (the relay serves plain HTTP)") }
        do throws(RelayError) {
            try tlsContext.reload()
            return .success("TLS certificate reloaded from \(tlsContext.files.certificateChain)")
        } catch {
            return .failure(error)
        }
    }

    /// `http(s)://host:port` as clients should use it: the public URL, else the address the relay listens
    /// on — but never a wildcard address, which no client can connect to: then this machine's address on
    /// the network (see ``ReachableAddress``).
    public func baseURL(port: Int) -> String {
        links.base(port: port)
    }

    /// Creates a session (what `POST /session` does, for an embedding process that holds the relay itself).
    public func createSession(connectionData: String = "", title: String = "") async throws -> SessionCredentials {
        try await credentials(for: openSession(connectionData: connectionData, title: title))
    }

    /// Makes a session and mints its publisher and viewer tokens, without waiting for the relay to listen.
    public func openSession(connectionData: String = "", title: String = "") async throws -> OpenedSession {
        try await sessions.open(connectionData: connectionData, title: title)
    }

    /// The session's credentials with the URLs clients use, once the relay listens (throws ``RelayError``
    /// if it never will).
    public func credentials(for session: OpenedSession, base: String? = nil) async throws -> SessionCredentials {
        try await links.credentials(for: session, base: base)
    }

    /// A transport to this relay inside the same process: the same protocol and session logic as `/ws`,
    /// without a socket (screenpub's embedded relay publishes through it).
    public var inProcessTransport: InProcessTransport {
        InProcessTransport(endpoint: "the relay in this process") { [connections] inbound, write, close, logger in
            await connections.serve(inbound: inbound, output: .messages(write), close: close, logger: logger)
        }
    }

    public func run() async throws {
        let router = Router(context: RelayRequestContext.self)
        router.add(middleware: HostCheck(
            policy: .forRelay(
                listeningOn: configuration.host, publicURL: configuration.publicURL, allowed: configuration.allowedHosts,
                machineNames: ReachableAddress.machineNames()),
            metrics: metrics))
        router.add(middleware: RequestBodyFirst())
        for routes in routeGroups() { routes.addRoutes(to: router) }
        let app = Application(
            router: router,
            server: serverBuilder(webSocketRouter: router),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "screenrelay"),
            services: [
                SessionHousekeeping(
                    registry: registry, emptySessionExpiry: .milliseconds(Int(configuration.emptySessionExpirySeconds * 1000)), store: store,
                    metrics: metrics, logger: logger)
            ],
            onServerRunning: { [listeningPort, logger] channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("screenrelay listening on port \(port)")
                listeningPort.opened(port)
            },
            logger: logger)
        do {
            // Recordings are finished as soon as the relay is asked to stop, before clients are waited for: the
            // files are complete even when the wait runs out and the rest is cancelled.
            try await withGracefulShutdownHandler {
                try await app.run()
            } onGracefulShutdown: { [archives, registry, logger, configuration, channelCensus] in
                Task {
                    await archives?.stopAll()
                    // Clients that have not closed by the end of the grace (one that reads nothing, one that never
                    // answers the close) are dropped, so that the relay exits within it whatever they do.
                    try? await Task.sleep(for: .milliseconds(Int(configuration.shutdownGraceSeconds * 1000)))
                    let hubs = await registry.all
                    if !hubs.isEmpty { logger.notice("shutdown grace over: dropping the connections still open") }
                    for hub in hubs { await hub.dropEveryone(reason: "the relay is shutting down") }
                    // And those in no session: a client that never said hello (pinging, say), an HTTP request.
                    channelCensus.closeAll()
                }
            }
        } catch {
            // Whoever waits for the port learns that it will not come; a relay that never listened says why, as what
            // to change.
            let failure = RelayError(.cannotListen, ListeningPort.reason(error, host: configuration.host, port: configuration.port))
            let neverListened = listeningPort.failed(failure)
            await archives?.stopAll()
            if !neverListened { sayIfCutShort() }
            throw neverListened ? failure : error
        }
        // Recordings in progress are finished, so that their files are complete.
        await archives?.stopAll()
        sayIfCutShort()
    }

    /// Says so when the service group had to cancel the relay: connections still open past the grace and the
    /// group's 10 s more, which the drop at the grace's end should never leave.
    private func sayIfCutShort() {
        guard Task.isCancelled else { return }
        logger.warning("the relay was cancelled before its connections had closed: some were still open 10 s after the shutdown grace")
    }

    /// The HTTP API's route groups, each with what it uses.
    private func routeGroups() -> [any RelayRoutes] {
        let secret = RelaySecretCheck(secret: configuration.secret)
        let trustedProxies = Set(configuration.trustedProxies)
        return [
            MonitoringRoutes(metrics: metrics, metricsToken: configuration.metricsToken),
            ViewerRoutes(viewer: viewer),
            SessionRoutes(secret: secret, tokens: tokens, registry: registry, sessions: sessions, links: links),
            ArchiveRoutes(secret: secret, tokens: tokens, archives: archives, requestRates: requestRates, metrics: metrics),
            HLSRoutes(
                secret: secret, tokens: tokens, registry: registry, hlsConfiguration: hlsConfiguration,
                waitingRequestsPerClient: configuration.hlsWaitingRequestsPerClient, trustedProxies: trustedProxies,
                requestRates: requestRates, metrics: metrics, logger: logger),
            WebSocketRoutes(
                connections: connections, forwardedClients: forwardedClients, trustedProxies: trustedProxies, metrics: metrics,
                messageDeadlineSeconds: configuration.messageDeadlineSeconds, maximumControlMessageSize: configuration.maximumControlMessageSize),
        ]
    }

    /// HTTP/1.1 with the WebSocket upgrade, behind the connection gate, TLS when configured, and the guard of
    /// request heads' deadline and size (``RelayChildChannel``).
    private func serverBuilder(webSocketRouter: Router<RelayRequestContext>) -> HTTPServerBuilder {
        let total = DescriptorLimit.affordableConnections(configuration.maximumConnections)
        if total < configuration.maximumConnections {
            logger.notice("at most \(total) connections at once: the descriptor limit allows no more (max-connections is \(configuration.maximumConnections))")
        }
        let gate = ConnectionGate(limits: .init(total: total, perAddress: configuration.maximumConnectionsPerAddress))
        let idle = Duration.milliseconds(Int(configuration.idleTimeoutSeconds * 1000))
        let headLimits = RequestHeadGuard.Limits(
            timeout: .milliseconds(Int64(configuration.requestHeadTimeoutSeconds * 1000)),
            size: .init(requestLine: configuration.maximumRequestLineBytes, headerFields: configuration.maximumRequestHeaderBytes))
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                idleTimeout: .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000)), httpDecoderConfiguration: headLimits.decoderConfiguration),
            ws: .init(
                maxFrameSize: WebSocketLimits.maximumFrameSize, autoPing: .enabled(timePeriod: idle / 2), closeTimeout: .seconds(10),
                validateUTF8: true))
        let webSocketResponder = WebSocketUpgradeResponder(base: webSocketRouter.buildResponder())
        let logs = RelayChildChannel.Logs(logger: logger)
        let writeStallTimeout = TimeAmount.milliseconds(Int64(configuration.idleTimeoutSeconds * 1000))
        return HTTPServerBuilder { [tlsContext, metrics, channelCensus] responder in
            RelayChildChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channelConfiguration),
                gate: gate, tls: tlsContext, headLimits: headLimits,
                writeStallTimeout: writeStallTimeout, metrics: metrics, logs: logs, census: channelCensus)
        }
    }
}
