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
    /// Whether clients whose token has the publisher role may send signals (chat); subscribers and
    /// moderators always may.
    public var publishersMaySignal: Bool
    /// Where archives and their index live; nil: this relay does not record (the archive API answers 503).
    public var dataDirectory: String?
    /// Seconds a recorded session may have no stream before its archive stops by itself.
    public var archiveGraceSeconds: Double
    /// Control messages (signals, announcements) one connection may have waiting to be written; past this,
    /// or past ``maximumQueuedControlBytes``, it is closed: it does not read what it is sent.
    public var maximumQueuedControlMessages = 1024
    public var maximumQueuedControlBytes = 4 << 20
    /// Signals one connection may send per second on average, and in a burst; past them they are refused.
    public var signalsPerSecond = 20.0
    public var signalBurst = 40.0
    /// PEM certificate chain and key: the relay serves HTTPS and WSS; nil: plain HTTP and WS.
    public var tls: RelayTLSFiles?
    /// TCP connections the relay keeps open at once (kept below its descriptor limit), and from one address
    /// (loopback, where a reverse proxy connects from, has no per-address cap).
    public var maximumConnections = 10_000
    public var maximumConnectionsPerAddress = 64
    /// Seconds a new connection has to send its first request's head (TLS handshake included).
    public var requestHeadTimeoutSeconds = 10.0
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
    public var maximumStreamsPerConnection = 16
    public var maximumStreamNameBytes = 256
    /// When set, `/metrics` answers only `Authorization: Bearer <this>`.
    public var metricsToken: String?
    /// HLS (`/hls/{session}/index.m3u8`): segments of about this many seconds, each starting at a keyframe
    /// the relay asks for; packaging stops ``hlsIdleSeconds`` after the last request.
    public var hlsSegmentSeconds = 2.0
    public var hlsIdleSeconds = 60.0
    /// Also write every session's HLS to `DIRECTORY/{session}/` (for a web server or CDN), from its first frame.
    public var hlsDirectory: String?
    /// Also send every session's HLS to this HTTP origin (`PUT`/`DELETE` under `URL/{session}/`).
    public var hlsPushURL: String?

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

    /// `$XDG_STATE_HOME/NAME`, else `~/.local/state/NAME` (the XDG base directory rules), in `environment`
    /// (default: this process's).
    public static func defaultDataDirectory(application: String, environment: [String: String]? = nil) -> String {
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/" + application }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/" + application
    }
}

/// screenrelay: the session server. HTTP API for sessions and tokens, one WebSocket per client at `/ws`, the
/// fan-out of every session's streams, `/healthz` and `/metrics`. A ServiceLifecycle service: graceful shutdown
/// stops accepting, closes connections and returns.
public final class RelayServer: Service {
    public let configuration: RelayConfiguration
    public let metrics = RelayMetrics()
    private let logger: Logger
    let registry: SessionRegistry
    /// How every session's HLS is packaged, whether a player started it or it is written out from the first frame.
    let hlsConfiguration: HLSPackager.Configuration
    let tokens: TokenAuthority
    private let viewer = ViewerAssets()
    let archives: ArchiveManager?
    /// Sessions and archives across restarts; nil without a data directory.
    let store: RelayStore?
    /// The certificate new connections get; nil: plain HTTP.
    private let tlsContext: ServerTLSContext?
    private let listening = Locked<(port: Int?, failure: String?, waiters: [CheckedContinuation<Int, any Error>])>((nil, nil, []))

    /// Largest WebSocket message accepted from a publisher: a media frame's header, metadata and maximum payload.
    static let maximumMessageSize = WebSocketLimits.maximumMessageSize
    /// Seconds a new WebSocket has to send `hello`.
    static let helloTimeout: Double = 10
    /// How long a client the relay closes has to answer the close before its connection is cut.
    static let closeGrace = Duration.seconds(10)

    /// Runs `drop` after `grace` (it closes a connection that may already be gone: closing twice is harmless).
    static func drop(after grace: Duration, _ drop: @escaping @Sendable () -> Void) {
        Task {
            try? await Task.sleep(for: grace)
            drop()
        }
    }

    public init(configuration: RelayConfiguration, logger: Logger) async throws {
        self.configuration = configuration
        self.logger = logger
        let hls = HLSPackager.Configuration(
            segmentSeconds: configuration.hlsSegmentSeconds, idleSeconds: configuration.hlsIdleSeconds,
            directory: configuration.hlsDirectory, pushURL: configuration.hlsPushURL, logger: logger)
        hlsConfiguration = hls
        self.registry = SessionRegistry(
            metrics: metrics,
            limits: .init(
                signalsPerSecond: configuration.signalsPerSecond, signalBurst: configuration.signalBurst,
                maximumStreamsPerConnection: configuration.maximumStreamsPerConnection,
                maximumStreamNameBytes: configuration.maximumStreamNameBytes),
            publishersMaySignal: configuration.publishersMaySignal,
            archiveGrace: .milliseconds(Int(configuration.archiveGraceSeconds * 1000)),
            alwaysHLS: hls.isWrittenOut ? hls : nil)
        self.tokens = try await TokenAuthority(secret: configuration.secret)
        tlsContext = try configuration.tls.map { files throws(RelayError) in try ServerTLSContext(files: files) }
        if let dataDirectory = configuration.dataDirectory {
            let store = try RelayStore(dataDirectory: dataDirectory)
            self.store = store
            archives = try ArchiveManager(store: store, registry: registry, logger: logger)
            let known = try store.sessions(createdAfter: Date().addingTimeInterval(-TokenAuthority.maximumLifetime))
            for session in known { _ = await registry.create(id: session.id, title: session.title, createdAt: session.createdAt) }
            if !known.isEmpty { logger.info("\(known.count) session(s) restored from \(dataDirectory)") }
        } else {
            store = nil
            archives = nil
        }
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(configuration.host) || configuration.host.hasPrefix("127.")
        if !loopback, configuration.tls == nil, !(configuration.publicURL ?? "").hasPrefix("https://") {
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
        if viewer.directory == nil {
            logger.warning("the browser viewer's files were not found (looked in \(viewer.searched.joined(separator: ", "))); /view will answer 500")
        }
    }

    /// The port the relay listens on, once it does; throws ``RelayError`` (`.cannotListen`) if it never will.
    public func waitUntilListening() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let known = listening.withLock { state -> Result<Int, RelayError>? in
                if let port = state.port { return .success(port) }
                if let failure = state.failure { return .failure(RelayError(.cannotListen, failure)) }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(with: known) }
        }
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
        if let publicURL = configuration.publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        let host = ReachableAddress.replacingWildcard(configuration.host)
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The base URL for links in an answer to a request: the public URL, else the `Host` the client used
    /// (the name it reached us by works for it and for whoever it shares the link with), with the scheme a
    /// TLS proxy in front says it was reached by (`X-Forwarded-Proto`).
    func baseURL(for request: Request, port: Int) -> String {
        if configuration.publicURL == nil, let host = request.head.authority, ReachableAddress.isValidHost(host) {
            let forwarded = request.headers[.init("X-Forwarded-Proto")!]?.lowercased()
            return "\(forwarded == "https" || forwarded == "http" ? forwarded! : scheme)://\(host)"
        }
        return baseURL(port: port)
    }

    var scheme: String { tlsContext == nil ? "http" : "https" }

    /// A transport to this relay inside the same process: the same protocol and session logic as `/ws`,
    /// without a socket (screenpub's embedded relay publishes through it).
    public var inProcessTransport: InProcessTransport {
        InProcessTransport(endpoint: "the relay in this process") { [self] inbound, write, close, logger in
            await serveConnection(inbound: inbound, write: write, close: close, logger: logger)
        }
    }

    public func run() async throws {
        let router = Router(context: RelayRequestContext.self)
        router.add(middleware: RequestBodyFirst())
        addHTTPRoutes(router)
        addArchiveRoutes(router)
        addHLSRoutes(router)
        addWebSocketRoute(router)
        let app = Application(
            router: router,
            server: serverBuilder(webSocketRouter: router),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "screenrelay"),
            services: [
                SessionHousekeeping(
                    registry: registry, emptySessionExpiry: .milliseconds(Int(configuration.emptySessionExpirySeconds * 1000)), store: store,
                    logger: logger)
            ],
            onServerRunning: { [listening, logger] channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("screenrelay listening on port \(port)")
                let waiters = listening.withLock { state in
                    state.port = port
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume(returning: port) }
            },
            logger: logger)
        do {
            try await app.run()
        } catch {
            // Whoever waits for the port learns that it will not come.
            let failure = RelayError(.cannotListen, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
            let waiters = listening.withLock { state in
                if state.port == nil { state.failure = failure.message }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(throwing: failure) }
            await archives?.stopAll()
            throw error
        }
        // Recordings in progress are finished, so that their files are complete.
        await archives?.stopAll()
    }

    /// HTTP/1.1 with the WebSocket upgrade, behind the connection gate, TLS when configured, and the
    /// request-head deadline (``RelayChildChannel``).
    private func serverBuilder(webSocketRouter: Router<RelayRequestContext>) -> HTTPServerBuilder {
        let total = ConnectionGate.affordableConnections(configuration.maximumConnections)
        if total < configuration.maximumConnections {
            logger.notice("at most \(total) connections at once: the descriptor limit allows no more (max-connections is \(configuration.maximumConnections))")
        }
        let gate = ConnectionGate(limits: .init(total: total, perAddress: configuration.maximumConnectionsPerAddress))
        let idle = Duration.milliseconds(Int(configuration.idleTimeoutSeconds * 1000))
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000))),
            ws: .init(
                maxFrameSize: WebSocketLimits.maximumFrameSize, autoPing: .enabled(timePeriod: idle / 2), closeTimeout: .seconds(10),
                validateUTF8: true))
        let webSocketResponder = webSocketRouter.buildResponder()
        let headTimeout = TimeAmount.milliseconds(Int64(configuration.requestHeadTimeoutSeconds * 1000))
        let refusalLog = RateLimitedLog(logger: logger)
        return HTTPServerBuilder { [tlsContext, metrics] responder in
            RelayChildChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channelConfiguration),
                gate: gate, tls: tlsContext, requestHeadTimeout: headTimeout, metrics: metrics, refusalLog: refusalLog)
        }
    }

    // MARK: HTTP

    private struct SessionRequest: Decodable {
        var data: String?
        var title: String?
    }
    /// Longest session title, in characters.
    static let maximumTitleLength = 200
    private struct TokenRequest: Decodable {
        /// Checked by hand, so that a wrong one gets a sentence rather than a decoding error.
        var role: String?
        var expiresIn: Double?
        var data: String?
    }
    struct TokenMinted: ResponseEncodable {
        var sessionId: String
        var token: String
        var role: Role
        var expiresAt: String
        /// The viewer page with this token (subscribers and moderators watch; a publisher's token goes to screenpub).
        var viewerURL: String?
    }

    private func addHTTPRoutes(_ router: Router<RelayRequestContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        // Someone who opens the bare address learns what this is and what to open instead.
        router.get("/") { _, _ in
            Response(
                status: .ok,
                headers: [
                    .contentType: "text/html; charset=utf-8", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
                    .init("X-Content-Type-Options")!: "nosniff",
                ],
                body: .init(byteBuffer: ByteBuffer(string: Self.homePage)))
        }
        // The viewer page: the token in its query string decides what it may see, so the page itself is public.
        // It is sent with no-referrer so that the token does not leak to other sites.
        router.get("/view/{session}") { [self] _, _ in try viewerResponse("index.html") }
        router.get("/archive/{id}/view") { [self] _, _ in try viewerResponse("archive.html") }
        router.get("/viewer/{file}") { [self] _, context in try viewerResponse(try context.parameters.require("file")) }
        router.get("/metrics") { [self, metrics] request, _ in
            if let token = configuration.metricsToken, !constantTimeEqual(bearer(request) ?? "", token) {
                metrics.refused(.metricsToken)
                throw HTTPError(.unauthorized, message: "/metrics needs its token: Authorization: Bearer <metrics token>")
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        router.post("/session") { [self] request, context -> SessionCreatedResponse in
            try authorize(request)
            var body: SessionRequest?
            if request.headers[.contentLength].map({ $0 != "0" }) ?? (request.headers[.transferEncoding] != nil) {
                do { body = try await request.decode(as: SessionRequest.self, context: context) } catch {
                    throw HTTPError(.badRequest, message: "the body must be JSON: {\"title\": … (optional), \"data\": publisher's connection data (optional)}")
                }
            }
            let title = (body?.title ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard title.count <= Self.maximumTitleLength, !title.contains(where: { $0.isNewline }) else {
                throw HTTPError(.badRequest, message: "a session title is one line of at most \(Self.maximumTitleLength) characters")
            }
            let session = try await openSession(connectionData: body?.data ?? "", title: title)
            return SessionCreatedResponse(
                try await credentials(for: session, base: baseURL(for: request, port: waitUntilListening())))
        }
        // The live sessions: who is there, what is published and watched, whether it is recorded.
        router.get("/session") { [self] request, _ -> Response in
            try authorize(request)
            var summaries: [SessionSummary] = []
            for hub in await registry.all { summaries.append(await hub.summary) }
            summaries.sort { ($0.createdAt, $0.sessionId) < ($1.createdAt, $1.sessionId) }
            return try Self.json(["items": summaries])
        }
        // One session, for the server side or anyone holding a token of it (the viewer shows its title and count).
        router.get("/session/{id}") { [self] request, context -> Response in
            let sessionId = try context.parameters.require("id")
            if !constantTimeEqual(bearer(request) ?? "", configuration.secret) {
                let presented = bearer(request) ?? request.uri.queryParameters["token"].map(String.init) ?? ""
                let grant: SessionGrant
                do throws(WireError) { grant = try await tokens.verify(presented) } catch {
                    throw HTTPError(.unauthorized, message: "this call needs the relay secret or a token of the session: \(error.message)")
                }
                guard grant.sessionId == sessionId else { throw HTTPError(.forbidden, message: "the token is for another session") }
            }
            guard let hub = await registry.hub(sessionId) else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
            return try Self.json(await hub.summary)
        }
        // A signal from the server side to one connection or the whole session.
        router.post("/session/{id}/signal") { [self] request, context -> Response in
            try authorize(request)
            let sessionId = try context.parameters.require("id")
            guard let hub = await registry.hub(sessionId) else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
            let body: SignalRequest
            do {
                body = try await request.decode(as: SignalRequest.self, context: context)
            } catch {
                throw HTTPError(.badRequest, message: "the body must be JSON: {\"type\": …, \"data\": …, \"to\": connection id (optional)}")
            }
            do {
                try await hub.serverSignal(Signal(type: body.type, data: body.data ?? "", to: body.to))
            } catch let error as WireError {
                throw HTTPError(error.kind == .notFound ? .notFound : .badRequest, message: "\(error.kind.rawValue): \(error.message)")
            }
            return Response(status: .noContent)
        }
        router.post("/session/{id}/token") { [self] request, context -> TokenMinted in
            try authorize(request)
            let sessionId = try context.parameters.require("id")
            guard await registry.hub(sessionId) != nil else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
            let body: TokenRequest
            do { body = try await request.decode(as: TokenRequest.self, context: context) } catch {
                throw HTTPError(
                    .badRequest,
                    message: "the body must be JSON: {\"role\": \"subscriber\" (or publisher, moderator), \"expiresIn\": seconds, \"data\": \"name=Ada\"} (all optional)")
            }
            guard let role = body.role.map({ Role(rawValue: $0) }) ?? .subscriber else {
                throw HTTPError(.badRequest, message: "role must be publisher, subscriber or moderator, got \"\(body.role ?? "")\"")
            }
            let lifetime = body.expiresIn ?? 24 * 3600
            let token = try await mint(sessionId: sessionId, role: role, expiresIn: lifetime, data: body.data ?? "")
            let base = baseURL(for: request, port: try await waitUntilListening())
            return TokenMinted(
                sessionId: sessionId, token: token, role: role,
                expiresAt: ISO8601DateFormatter().string(from: Date().addingTimeInterval(lifetime)),
                viewerURL: role == .publisher ? nil : "\(base)/view/\(sessionId)?token=\(token)")
        }
    }

    static let homePage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>screenrelay</title>
        <style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#222}code{background:#eee;padding:0 .2em}</style>
        </head><body>
        <h1>screenrelay</h1>
        <p>This is a <strong>screenpub session server</strong>: it relays screens shared with <code>screenpub</code> to the
        people who were given a link to watch them.</p>
        <p>To watch, open the viewer link you were sent, as it is: it looks like <code>…/view/SESSION?token=…</code>.
        There is nothing to see at this address itself.</p>
        <p>To run or manage a relay: <code>screenrelay --help</code>, <code>man screenrelay</code>, and the README in
        <code>/usr/share/doc/screenpub/</code>.</p>
        </body></html>

        """

    private func viewerResponse(_ name: String) throws -> Response {
        guard ViewerAssets.files.contains(where: { $0.name == name }) else { throw HTTPError(.notFound) }
        guard let asset = viewer[name] else {
            throw HTTPError(.internalServerError, message: "the viewer's files are not installed (looked in \(viewer.searched.joined(separator: ", ")))")
        }
        var headers: HTTPFields = [
            .contentType: asset.contentType,
            .cacheControl: "no-store",
            .init("Referrer-Policy")!: "no-referrer",
            .init("X-Content-Type-Options")!: "nosniff",
        ]
        if name.hasSuffix(".html") {
            headers[.contentSecurityPolicy] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; frame-ancestors 'none'"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    private struct SignalRequest: Decodable {
        var type: String
        var data: String?
        var to: String?
    }

    /// Creates a session (what `POST /session` does, for an embedding process that holds the relay itself).
    public func createSession(connectionData: String = "", title: String = "") async throws -> SessionCredentials {
        try await credentials(for: openSession(connectionData: connectionData, title: title))
    }

    /// A session made and its tokens minted, before the relay necessarily listens (its URLs need the port).
    public struct OpenedSession: Sendable {
        public let sessionId: String
        /// The publisher's token.
        public let token: String
        let viewerToken: String
    }

    /// Makes a session and mints its publisher and viewer tokens, without waiting for the relay to listen.
    public func openSession(connectionData: String = "", title: String = "") async throws -> OpenedSession {
        guard let hub = await registry.create(limit: configuration.maximumSessions, title: title) else {
            metrics.refused(.sessionCap)
            throw HTTPError(
                .serviceUnavailable,
                message: "this relay has \(configuration.maximumSessions) sessions, the most it keeps (max-sessions); empty ones expire after \(Int(configuration.emptySessionExpirySeconds)) s")
        }
        do {
            try store?.saveSession(hub.sessionId, title: hub.title, createdAt: hub.createdAt)
        } catch {
            logger.error("session \(hub.sessionId) will not survive a restart: \(error)")
        }
        let token = try await mint(sessionId: hub.sessionId, role: .publisher, expiresIn: 24 * 3600, data: connectionData)
        let viewerToken = try await mint(sessionId: hub.sessionId, role: .subscriber, expiresIn: 24 * 3600, data: "")
        logger.info("session \(hub.sessionId) created")
        return OpenedSession(sessionId: hub.sessionId, token: token, viewerToken: viewerToken)
    }

    /// The session's credentials with the URLs clients use, once the relay listens (throws ``RelayError``
    /// if it never will).
    public func credentials(for session: OpenedSession, base: String? = nil) async throws -> SessionCredentials {
        let port = try await waitUntilListening()
        let base = base ?? baseURL(port: port)
        return SessionCredentials(
            sessionId: session.sessionId, token: session.token, relayURL: RelayEndpoint.webSocketURL(server: base),
            viewerURL: "\(base)/view/\(session.sessionId)?token=\(session.viewerToken)")
    }

    private func mint(sessionId: String, role: Role, expiresIn: Double, data: String) async throws -> String {
        do {
            return try await tokens.mint(sessionId: sessionId, role: role, expiresIn: expiresIn, connectionData: data)
        } catch {
            throw HTTPError(.badRequest, message: error.message)
        }
    }

    /// What `Authorization: Bearer …` presents; nil without that header in that form.
    func bearer(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst(7))
    }

    /// The session API needs the relay secret: `Authorization: Bearer <secret>`.
    private func authorize(_ request: Request) throws {
        let presented = bearer(request) ?? ""
        guard constantTimeEqual(presented, configuration.secret) else {
            throw HTTPError(.unauthorized, message: "this call needs the relay secret: Authorization: Bearer <secret>")
        }
    }

    // MARK: WebSocket

    private func addWebSocketRoute(_ router: Router<RelayRequestContext>) {
        router.ws(RouterPath(RelayEndpoint.webSocketPath)) { [self, metrics, configuration] inbound, outbound, context in
            let channel = context.requestContext.channel
            let deadline = configuration.messageDeadlineSeconds
            var reader = WebSocketMessageReader(
                inbound, channel: channel,
                limits: .init(
                    controlMessageSize: configuration.maximumControlMessageSize,
                    deadline: .milliseconds(Int64(deadline * 1000)))
            ) {
                metrics.refused(.messageDeadline)
                Self.drop(after: Self.closeGrace) { channel.close(promise: nil) }
                Task { try? await outbound.close(.policyViolation, reason: "a message took longer than \(Int(deadline)) s to arrive") }
            }
            let binaryLimit = reader.binaryLimit
            await serveConnection(
                inbound: RelayInbound {
                    do {
                        return try await reader.next()
                    } catch let violation as WebSocketMessageReader.Violation {
                        if let limit = violation.limit { metrics.refused(limit) } else { metrics.add(.protocolErrors) }
                        Self.drop(after: Self.closeGrace) { channel.close(promise: nil) }
                        try? await outbound.close(violation.code, reason: violation.reason)
                        return nil
                    }
                },
                write: { try await outbound.write($0) },
                close: { code, reason in try await outbound.close(Self.closeCode(for: code), reason: String(reason.prefix(120))) },
                drop: { channel.close(promise: nil) },
                joinedAs: { role in if role.mayPublish { binaryLimit.withLock { $0 = Self.maximumMessageSize } } },
                logger: context.logger)
        }
    }

    /// Serves one client, whatever carries it (a WebSocket, or the in-process transport): joins it to the
    /// session its hello names, feeds its messages to the session and writes what the session sends it, in
    /// order, with the transport's backpressure. Returns when the connection has ended.
    func serveConnection(
        inbound: RelayInbound, write: @escaping @Sendable (RelayMessage) async throws -> Void,
        close: @escaping @Sendable (WireErrorCode, String) async throws -> Void,
        drop: @escaping @Sendable () -> Void = {}, joinedAs: @escaping @Sendable (Role) -> Void = { _ in },
        logger connectionLogger: Logger
    ) async {
        let connectionId = "c" + SessionRegistry.newIdentifier().prefix(12)
        let outlet = ConnectionOutlet(
            limits: .init(messages: configuration.maximumQueuedControlMessages, bytes: configuration.maximumQueuedControlBytes))
        let joined = Locked<SessionHub?>(nil)
        let helloTimer = Task {
            try? await Task.sleep(for: .seconds(Self.helloTimeout))
            if !Task.isCancelled, joined.value == nil {
                outlet.yield(.control(ControlMessage.error(code: .badState, message: "no hello within \(Int(Self.helloTimeout)) s").encoded()))
                outlet.yield(.close(.badState, "no hello"))
            }
        }
        // Ends the connection when its token expires (a token is checked at hello; this keeps it true after).
        let expiry = Locked<Task<Void, Never>?>(nil)
        defer {
            helloTimer.cancel()
            expiry.value?.cancel()
        }
        // The writer: everything this client is sent, in order, with backpressure from the transport. It drains
        // the queue (an error and a close included) and then ends. It is cancelled only when the client let its
        // queue overflow: its socket may never take another byte, and what was queued for it is dropped.
        let writer = Task {
            do {
                while let item = await outlet.next() {
                    defer { outlet.sent(item) }
                    switch item {
                    case .frame(let buffer, let streamId):
                        try await write(.binary(buffer))
                        await joined.value?.delivered(to: connectionId, streamId: streamId, bytes: buffer.readableBytes)
                    case .audio(let buffer, let streamId):
                        try await write(.binary(buffer))
                        await joined.value?.audioDelivered(to: connectionId, streamId: streamId, bytes: buffer.readableBytes)
                    case .control(let text):
                        try await write(.text(text))
                    case .close(let code, let reason):
                        // A client that does not answer the close (or is stuck mid-message) is cut off after a grace.
                        Self.drop(after: Self.closeGrace, drop)
                        try await close(code, reason)
                        return
                    }
                }
            } catch {
                connectionLogger.debug("writing to \(connectionId) failed: \(error)")
            }
        }
        outlet.onOverflow { [metrics, configuration] in
            metrics.add(.overflowCloses)
            connectionLogger.info(
                "closing \(connectionId): it does not read what it is sent (more than \(configuration.maximumQueuedControlMessages) messages or \(configuration.maximumQueuedControlBytes) bytes queued)")
            writer.cancel()
            drop()
        }
        do {
            while let message = try await inbound.next() {
                let keepGoing = try await handle(
                    message, connectionId: connectionId, joined: joined, expiry: expiry, outlet: outlet, joinedAs: joinedAs)
                if !keepGoing || outlet.overflowed { break }
            }
        } catch {
            connectionLogger.debug("connection \(connectionId) ended: \(error)")
        }
        if let hub = joined.value { await hub.leave(connectionId) }
        outlet.finish()
        // A client that let its queue overflow may never read again: its connection is dropped now (the
        // transport closes it when this returns), not after a write that may never complete.
        if !outlet.overflowed { await writer.value }
    }

    /// Handles one inbound message; false when the connection must close.
    private func handle(
        _ message: RelayMessage, connectionId: String, joined: Locked<SessionHub?>, expiry: Locked<Task<Void, Never>?>,
        outlet: ConnectionOutlet, joinedAs: @Sendable (Role) -> Void
    ) async throws -> Bool {
        func refuse(_ error: WireError) -> Bool {
            metrics.add(.protocolErrors)
            outlet.yield(.control(ControlMessage.error(code: error.kind, message: error.message).encoded()))
            outlet.yield(.close(error.kind, error.message))
            return false
        }
        let hub = joined.value
        switch message {
        case .text(let text):
            let control: ControlMessage
            do { control = try ControlMessage.parse(text) } catch { return refuse(error) }
            guard let hub else {
                guard case .hello(let token, _) = control else {
                    return refuse(WireError(.badState, "the first message must be hello"))
                }
                let grant: SessionGrant
                do {
                    grant = try await tokens.verify(token)
                } catch {
                    metrics.add(.rejectedTokens)
                    return refuse(error)
                }
                guard let sessionHub = await registry.hub(grant.sessionId) else {
                    metrics.add(.rejectedTokens)
                    return refuse(WireError(.wrongSession, "the token's session no longer exists"))
                }
                joined.withLock { $0 = sessionHub }
                joinedAs(grant.role)
                // Viewers and moderators are cut off when their token expires. A publisher is not: its stream
                // (a share running for days) would end mid-way; it shows a valid token again on reconnecting.
                if grant.role != .publisher { expiry.withLock { $0 = Self.closeWhenExpired(grant, outlet: outlet) } }
                await sessionHub.join(ConnectionInfo(connectionId: connectionId, role: grant.role, data: grant.connectionData), outlet: outlet)
                return true
            }
            await hub.control(control, from: connectionId)
            return true
        case .binary(let buffer):
            guard let hub else { return refuse(WireError(.badState, "the first message must be hello")) }
            let parsed = buffer.withUnsafeReadableBytes { bytes in
                Result { () throws(WireError) in try MediaMessage.parse(bytes) }
            }
            switch parsed {
            case .success(.video(let header, _)):
                await hub.media(buffer, header: header, from: connectionId)
                return true
            case .success(.audio(let header, _)):
                await hub.audio(buffer, header: header, from: connectionId)
                return true
            case .success(.unknownKind):
                // A kind of a later protocol version: not ours to forward.
                return true
            case .failure(let error):
                return refuse(error)
            }
        }
    }

    /// At the token's expiry: `tokenExpired`, then the connection closes (cancel the task to keep it).
    static func closeWhenExpired(_ grant: SessionGrant, outlet: ConnectionOutlet) -> Task<Void, Never> {
        Task {
            let left = max(0, grant.expiresAt.timeIntervalSinceNow)
            try? await Task.sleep(for: .milliseconds(Int(min(left, TokenAuthority.maximumLifetime) * 1000)))
            guard !Task.isCancelled else { return }
            let message = "the token expired at \(ISO8601DateFormatter().string(from: grant.expiresAt)); connect again with a new one"
            outlet.yield(.control(ControlMessage.error(code: .tokenExpired, message: message).encoded()))
            outlet.yield(.close(.tokenExpired, "the token expired"))
        }
    }

    static func closeCode(for code: WireErrorCode) -> WebSocketErrorCode {
        switch code {
        case .tooLarge: .messageTooLarge
        case .invalidToken, .tokenExpired, .wrongSession, .forbidden: .policyViolation
        case .malformed, .unsupportedVersion, .unknownMessage, .metadataTooLarge, .badState, .notFound, .invalidSignal: .protocolError
        case .internalError: .unexpectedServerError
        }
    }
}

/// Sends keyframe requests the router held back for its throttle, every 100 ms, and removes the sessions
/// that have been empty too long, every minute at most.
private struct SessionHousekeeping: Service {
    let registry: SessionRegistry
    let emptySessionExpiry: Duration
    let store: RelayStore?
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            let sweepEvery = min(Duration.seconds(60), max(Duration.milliseconds(100), emptySessionExpiry / 4))
            var lastSweep = ContinuousClock.now
            var lastDescriptorCheck = ContinuousClock.now
            let nearLimit = RateLimitedLog(logger: logger)
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                for hub in await registry.all { await hub.tick() }
                // Accept errors (EMFILE) are backed off by NIO without a word; this says why, once a minute.
                if ContinuousClock.now - lastDescriptorCheck >= .seconds(10) {
                    lastDescriptorCheck = .now
                    if let (open, limit) = ConnectionGate.descriptorUse(), open * 10 >= limit * 9 {
                        nearLimit.log("\(open) of \(limit) file descriptors are open: new connections may fail (raise LimitNOFILE, or lower max-connections)")
                    }
                }
                guard ContinuousClock.now - lastSweep >= sweepEvery else { continue }
                lastSweep = .now
                let removed = await registry.removeIdle(for: emptySessionExpiry)
                guard !removed.isEmpty else { continue }
                logger.info("\(removed.count) session(s) removed after \(emptySessionExpiry) without a client: \(removed.joined(separator: ", "))")
                do { try store?.deleteSessions(removed) } catch { logger.error("the removed sessions stay in the index: \(error)") }
            }
        }
    }
}

/// Compares secrets in time independent of where they differ.
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let left = Array(a.utf8), right = Array(b.utf8)
    var difference = UInt8(left.count == right.count ? 0 : 1)
    for index in 0..<max(left.count, right.count) {
        difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
    }
    return difference == 0
}

/// ``SessionCredentials`` as an HTTP response (a conformance to Hummingbird's protocol stays internal).
struct SessionCreatedResponse: ResponseEncodable {
    var sessionId: String
    var token: String
    var relayURL: String
    var viewerURL: String

    init(_ session: SessionCredentials) {
        sessionId = session.sessionId
        token = session.token
        relayURL = session.relayURL
        viewerURL = session.viewerURL
    }
}

/// Reads a request's body (the API's are small JSON) before it is handled. A call refused before its body was
/// read (401, 403) would otherwise leave the body unread when the connection closes (`Connection: close`), and
/// the kernel answers unread data with a reset that can reach the client before the refusal does: it then sees
/// "connection reset" instead of the reason.
struct RequestBodyFirst: RouterMiddleware {
    typealias Context = RelayRequestContext
    static let maximumSize = 64 << 10

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // GETs carry no body here, and a WebSocket upgrade's must be left to the upgrade.
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        var request = request
        do {
            _ = try await request.collectBody(upTo: Self.maximumSize)
        } catch {
            throw HTTPError(.contentTooLarge, message: "request bodies here are at most \(Self.maximumSize) bytes of JSON")
        }
        return try await next(request, context)
    }
}
