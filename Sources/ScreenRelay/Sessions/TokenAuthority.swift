public import Foundation
import JWTKit
public import ScreenWire

/// What a verified token says about its bearer.
public struct SessionGrant: Sendable, Equatable {
    public var sessionId: String
    public var role: Role
    /// Application data attached when the token was minted (≤ 1000 characters), shown to other participants.
    public var connectionData: String
    public var expiresAt: Date
    public var tokenId: String
}

/// Mints and verifies session tokens: HS256-signed JWTs whose claims are the session id, role, expiry and
/// connection data (the seed's `token` from the credentials endpoint).
///
/// Only the holder of the relay's secret can mint; a token verifies only with that secret, before its
/// expiry and for its own session.
public struct TokenAuthority: Sendable {
    public static let maximumLifetime: TimeInterval = 30 * 24 * 3600
    public static let maximumConnectionData = 1000

    private let keys: JWTKeyCollection

    /// `secret` must be at least 32 bytes (the size of the SHA-256 output); keep it out of logs and command lines.
    public init(secret: String) async throws(WireError) {
        guard secret.utf8.count >= 32 else {
            throw WireError(.internalError, "the relay secret must be at least 32 bytes long")
        }
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    }

    /// A new token for `sessionId`. `expiresIn` seconds, at most 30 days; `connectionData` at most 1000 characters.
    public func mint(
        sessionId: String, role: Role, expiresIn: TimeInterval = 24 * 3600, connectionData: String = "",
        now: Date = Date()
    ) async throws(WireError) -> String {
        guard expiresIn > 0, expiresIn <= Self.maximumLifetime else {
            throw WireError(.malformed, "expiresIn must be between 1 second and 30 days (2592000 s), got \(expiresIn)")
        }
        guard connectionData.count <= Self.maximumConnectionData else {
            throw WireError(.malformed, "connection data is \(connectionData.count) characters; the limit is \(Self.maximumConnectionData)")
        }
        let claims = SessionClaims(
            sid: sessionId, role: role.rawValue, data: connectionData,
            exp: ExpirationClaim(value: now.addingTimeInterval(expiresIn)), iat: IssuedAtClaim(value: now),
            jti: IDClaim(value: UUID().uuidString))
        do {
            return try await keys.sign(claims)
        } catch {
            throw WireError(.internalError, "could not sign a token: \(error)")
        }
    }

    /// Checks signature, expiry, session and role claims. `sessionId` nil accepts any session.
    public func verify(_ token: String, sessionId: String? = nil, now: Date = Date()) async throws(WireError) -> SessionGrant {
        guard !token.isEmpty else { throw WireError(.invalidToken, "no token") }
        let claims: SessionClaims
        do {
            claims = try await keys.verify(token, as: SessionClaims.self)
        } catch {
            throw WireError(.invalidToken, "the token is not valid: its signature does not verify or it is malformed")
        }
        // Expiry is checked here, against `now`, so tests and clock handling are explicit.
        guard claims.exp.value > now else {
            throw WireError(.tokenExpired, "the token expired at \(ISO8601DateFormatter().string(from: claims.exp.value)); ask for a new one")
        }
        if let sessionId, claims.sid != sessionId {
            throw WireError(.wrongSession, "the token is for another session")
        }
        guard let role = Role(rawValue: claims.role) else {
            throw WireError(.invalidToken, "the token has an unknown role \(claims.role)")
        }
        return SessionGrant(
            sessionId: claims.sid, role: role, connectionData: claims.data, expiresAt: claims.exp.value,
            tokenId: claims.jti.value)
    }
}

/// The JWT claims of a session token.
private struct SessionClaims: JWTPayload {
    var sid: String
    var role: String
    var data: String
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var jti: IDClaim

    /// Signature is checked by JWTKit; expiry and session by ``TokenAuthority/verify(_:sessionId:now:)``.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
