import Foundation
import HTTPTypes
import Hummingbird
import ScreenTransport
import ScreenWire

/// The session API (docs/protocol.md): create sessions, list them, mint tokens, send signals; guarded by the
/// relay secret (`Authorization: Bearer …`), except one session's summary, which its tokens may read too.
struct SessionRoutes: RelayRoutes {
    let secret: RelaySecretCheck
    let tokens: TokenAuthority
    let registry: SessionRegistry
    let sessions: SessionIssuer
    let links: RelayLinks

    /// Longest session title, in characters.
    static let maximumTitleLength = 200

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.post("/session") { request, context -> Response in
            try secret.require(request)
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
            let session = try await sessions.open(connectionData: body?.data ?? "", title: title)
            return try .json(try await links.credentials(for: session, base: links.base(for: request)))
        }
        // The live sessions: who is there, what is published and watched, whether it is recorded.
        router.get("/session") { request, _ -> Response in
            try secret.require(request)
            var summaries: [SessionSummary] = []
            for hub in await registry.all { summaries.append(await hub.summary) }
            summaries.sort { ($0.createdAt, $0.sessionId) < ($1.createdAt, $1.sessionId) }
            return try .json(["items": summaries])
        }
        // One session, for the server side or anyone holding a token of it (the viewer shows its title and count).
        router.get("/session/{id}") { request, context -> Response in
            let sessionId = try context.parameters.require("id")
            if !secret.isPresented(in: request) {
                let presented = request.bearerToken ?? request.queryToken ?? ""
                let grant: SessionGrant
                do throws(WireError) { grant = try await tokens.verify(presented) } catch {
                    throw HTTPError(.unauthorized, message: "this call needs the relay secret or a token of the session: \(error.message)")
                }
                guard grant.sessionId == sessionId else { throw HTTPError(.forbidden, message: "the token is for another session") }
            }
            return try .json(await registry.existingHub(sessionId).summary)
        }
        // A signal from the server side to one connection or the whole session.
        router.post("/session/{id}/signal") { request, context -> Response in
            try secret.require(request)
            let hub = try await registry.existingHub(try context.parameters.require("id"))
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
        router.post("/session/{id}/token") { request, context -> Response in
            try secret.require(request)
            let sessionId = try context.parameters.require("id")
            _ = try await registry.existingHub(sessionId)
            let body: TokenRequest
            do { body = try await request.decode(as: TokenRequest.self, context: context) } catch {
                throw HTTPError(
                    .badRequest,
                    message: "the body must be JSON: {\"role\": \"subscriber\" (or publisher, moderator), \"expiresIn\": seconds, \"data\": \"name=Ada\"} (all optional)")
            }
            guard let role = body.role.map({ Role(rawValue: $0) }) ?? .subscriber else {
                throw HTTPError(.badRequest, message: "role must be publisher, subscriber or moderator, got \"\(body.role ?? "")\"")
            }
            let lifetime = body.expiresIn ?? SessionIssuer.tokenLifetime
            let token = try await sessions.mint(sessionId: sessionId, role: role, expiresIn: lifetime, data: body.data ?? "")
            let base = try await links.base(for: request)
            return try .json(
                TokenMinted(
                    sessionId: sessionId, token: token, role: role,
                    expiresAt: ISO8601DateFormatter().string(from: Date().addingTimeInterval(lifetime)),
                    viewerURL: role == .publisher ? nil : RelayLinks.viewerURL(base: base, sessionId: sessionId, token: token)))
        }
    }

    private struct SignalRequest: Decodable {
        var type: String
        var data: String?
        var to: String?
    }
}
