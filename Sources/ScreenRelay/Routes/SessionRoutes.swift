import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScreenTransport
public import ScreenWire

/// The session API (docs/protocol.md): create sessions, list them, mint tokens, send signals; guarded by the
/// relay secret (`Authorization: Bearer …`), except one session's summary, which its tokens may read too.
extension RelayServer {

    /// Longest session title, in characters.
    static let maximumTitleLength = 200
    func addHTTPRoutes(_ router: Router<RelayRequestContext>) {
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
        router.get("/metrics") { [self, metrics] request, context in
            // With a token, for whoever shows it; without one, only for this machine (a local scraper): the
            // metrics name sessions, and nothing that can reach the port from elsewhere may read them by default.
            if let token = configuration.metricsToken {
                guard constantTimeEqual(bearer(request) ?? "", token) else {
                    metrics.refused(.metricsToken)
                    throw HTTPError(.unauthorized, message: "/metrics needs its token: Authorization: Bearer <metrics token>")
                }
            } else if !Self.isLocalAndDirect(request, channel: context.channel) {
                metrics.refused(.metricsToken)
                throw HTTPError(.unauthorized, message: "/metrics is served to this machine only; give the relay --metrics-token to scrape it from elsewhere")
            }
            metrics.set(.queuedBytes, queuedBytes.queuedBytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        router.post("/session") { [self] request, context -> Response in
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
            return try Self.json(try await credentials(for: session, base: baseURL(for: request, port: waitUntilListening())))
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
        router.post("/session/{id}/token") { [self] request, context -> Response in
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
            return try Self.json(
                TokenMinted(
                    sessionId: sessionId, token: token, role: role,
                    expiresAt: ISO8601DateFormatter().string(from: Date().addingTimeInterval(lifetime)),
                    viewerURL: role == .publisher ? nil : "\(base)/view/\(sessionId)?token=\(token)"))
        }
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

/// Reads a request's body (the API's are small JSON) before it is handled. A call refused before its body was
/// read (401, 403) would otherwise leave the body unread when the connection closes (`Connection: close`), and
/// the kernel answers unread data with a reset that can reach the client before the refusal does: it then sees
/// "connection reset" instead of the reason.
extension RelayServer {
    /// A request from a loopback address that no proxy forwarded (no `Forwarded` or `X-Forwarded-For`).
    static func isLocalAndDirect(_ request: Request, channel: any Channel) -> Bool {
        guard request.headers[.init("Forwarded")!] == nil, request.headers[.init("X-Forwarded-For")!] == nil,
            let address = channel.remoteAddress?.ipAddress
        else { return false }
        return ReachableAddress.isLoopback(address)
    }
}

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
