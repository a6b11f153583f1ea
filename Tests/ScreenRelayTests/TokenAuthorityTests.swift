import Foundation
import ScreenRelay
import ScreenWire
import ScreenTesting
import Testing

@Suite(.watchdog()) struct TokenAuthorityTests {
    static let secret = "a-relay-secret-of-32-bytes-length"

    private func code(_ body: () async throws -> SessionGrant) async -> WireErrorCode? {
        do {
            _ = try await body()
            return nil
        } catch {
            return (error as? WireError)?.kind
        }
    }

    @Test func aMintedTokenVerifiesWithItsClaims() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        let now = Date(timeIntervalSince1970: 1_795_324_222)
        let token = try await authority.mint(sessionId: "s1", role: .publisher, expiresIn: 3600, connectionData: "name=Ada", now: now)
        let grant = try await authority.verify(token, sessionId: "s1", now: now.addingTimeInterval(60))
        #expect(grant.sessionId == "s1")
        #expect(grant.role == .publisher)
        #expect(grant.connectionData == "name=Ada")
        #expect(grant.expiresAt == now.addingTimeInterval(3600))
        #expect(!grant.tokenId.isEmpty)
    }

    @Test func theTokenMatrix() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        let forger = try await TokenAuthority(secret: "another-secret-that-is-long-enough-for-hs256")
        let now = Date()
        let valid = try await authority.mint(sessionId: "s1", role: .subscriber, expiresIn: 60, now: now)
        let forged = try await forger.mint(sessionId: "s1", role: .moderator, expiresIn: 60, now: now)
        // The payload of a valid token with its role changed, keeping the signature.
        let parts = valid.split(separator: ".").map(String.init)
        let elevated = try elevate(parts)

        #expect(await code { try await authority.verify(valid, sessionId: "s1", now: now) } == nil)
        #expect(await code { try await authority.verify(forged, sessionId: "s1", now: now) } == .invalidToken)
        #expect(await code { try await authority.verify(elevated, sessionId: "s1", now: now) } == .invalidToken)
        #expect(await code { try await authority.verify(valid, sessionId: "s1", now: now.addingTimeInterval(61)) } == .tokenExpired)
        #expect(await code { try await authority.verify(valid, sessionId: "s2", now: now) } == .wrongSession)
        #expect(await code { try await authority.verify("", now: now) } == .invalidToken)
        #expect(await code { try await authority.verify("not.a.jwt", now: now) } == .invalidToken)
        #expect(await code { try await authority.verify(parts[0] + "." + parts[1] + ".", now: now) } == .invalidToken)
    }

    /// Rewrites the role claim of a token's payload, leaving header and signature as they were.
    private func elevate(_ parts: [String]) throws -> String {
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let json = try #require(Data(base64Encoded: payload)).map { Character(UnicodeScalar($0)) }
        let changed = String(json).replacingOccurrences(of: "\"subscriber\"", with: "\"moderator\"")
        let encoded = Data(changed.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return [parts[0], encoded, parts[2]].joined(separator: ".")
    }

    @Test func mintingLimits() async throws {
        let authority = try await TokenAuthority(secret: Self.secret)
        await #expect(throws: WireError.self) { _ = try await authority.mint(sessionId: "s", role: .publisher, expiresIn: 31 * 24 * 3600) }
        await #expect(throws: WireError.self) { _ = try await authority.mint(sessionId: "s", role: .publisher, expiresIn: 0) }
        await #expect(throws: WireError.self) {
            _ = try await authority.mint(sessionId: "s", role: .publisher, connectionData: String(repeating: "x", count: 1001))
        }
        _ = try await authority.mint(sessionId: "s", role: .publisher, expiresIn: 30 * 24 * 3600, connectionData: String(repeating: "x", count: 1000))
        await #expect(throws: WireError.self) { _ = try await TokenAuthority(secret: "short") }
    }
}
