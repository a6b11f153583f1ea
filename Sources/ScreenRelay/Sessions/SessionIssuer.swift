import Hummingbird
import Logging
import ScreenWire

/// Makes sessions and mints their tokens: what `POST /session` and `POST /session/{id}/token` do, and what an
/// embedding process calls directly (``RelayServer/openSession(connectionData:title:)``).
struct SessionIssuer: Sendable {
    let registry: SessionRegistry
    let tokens: TokenAuthority
    /// Where a session is kept across restarts; nil without a data directory.
    let store: RelayStore?
    let metrics: RelayMetrics
    let logger: Logger
    /// `--max-sessions`.
    let maximumSessions: Int
    /// How long an empty session is kept (what a refusal tells).
    let emptySessionExpirySeconds: Double

    /// How long the tokens a session is made with last.
    static let tokenLifetime: Double = 24 * 3600

    /// Makes a session and mints its publisher and viewer tokens, without waiting for the relay to listen.
    func open(connectionData: String, title: String) async throws -> RelayServer.OpenedSession {
        guard let hub = await registry.create(limit: maximumSessions, title: title) else {
            metrics.refused(.sessionCap)
            throw HTTPError(
                .serviceUnavailable,
                message: "this relay has \(maximumSessions) sessions, the most it keeps (max-sessions); empty ones expire after \(Int(emptySessionExpirySeconds)) s")
        }
        do {
            try store?.saveSession(hub.sessionId, title: hub.title, createdAt: hub.createdAt)
        } catch {
            logger.error("session \(hub.sessionId) will not survive a restart: \(error)")
        }
        let token = try await mint(sessionId: hub.sessionId, role: .publisher, expiresIn: Self.tokenLifetime, data: connectionData)
        let viewerToken = try await mint(sessionId: hub.sessionId, role: .subscriber, expiresIn: Self.tokenLifetime, data: "")
        logger.info("session \(hub.sessionId) created")
        return RelayServer.OpenedSession(sessionId: hub.sessionId, token: token, viewerToken: viewerToken)
    }

    /// A token of `sessionId`; a request the authority refuses (a lifetime out of range, connection data too long)
    /// is a bad request.
    func mint(sessionId: String, role: Role, expiresIn: Double, data: String) async throws -> String {
        do {
            return try await tokens.mint(sessionId: sessionId, role: role, expiresIn: expiresIn, connectionData: data)
        } catch {
            throw HTTPError(.badRequest, message: error.message)
        }
    }
}
