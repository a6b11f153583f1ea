import Foundation
import HTTPTypes
import Hummingbird
import ScreenWire

/// HLS of a session's screen stream (docs/protocol.md): `index.m3u8` (multivariant), `stream.m3u8` (media),
/// `init-N.mp4` and `seg-N.m4s`, for any token of the session (or the relay secret), given as
/// `Authorization: Bearer …` or `?token=` (which the playlists then carry into every URI they name).
/// Packaging starts with the first request for a playlist, which waits for the first segment, and stops a
/// while after the last request.
extension RelayServer {
    func addHLSRoutes(_ router: Router<RelayRequestContext>) {
        router.get("/hls/{session}/{file}") { [self] request, context -> Response in
            let sessionId = try context.parameters.require("session")
            let file = try context.parameters.require("file")
            let query = try await authorizeHLS(request, sessionId: sessionId)
            guard let hub = await registry.hub(sessionId) else {
                throw HTTPError(.notFound, message: "there is no session \(sessionId)")
            }
            return try await hlsResponse(file: file, hub: hub, query: query)
        }
        // A timed marker (an ad break, a chapter) for the session's HLS timeline: the secret or a moderator token.
        router.post("/session/{id}/marker") { [self] request, context -> Response in
            let sessionId = try context.parameters.require("id")
            try await authorizeMarker(request, sessionId: sessionId)
            guard let hub = await registry.hub(sessionId) else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
            try takeRequestAllowance(.marker, session: sessionId)
            let range: HLSPackager.DateRange
            do {
                let body = try await request.body.collect(upTo: HLSMarker.maximumBodySize)
                range = try HLSMarker.parse(Data(body.readableBytesView), now: .now())
            } catch let invalid as HLSMarker.Invalid {
                throw HTTPError(.badRequest, message: "bad marker: \(invalid.reason)")
            } catch {
                throw HTTPError(.badRequest, message: "bad marker: a marker is at most \(HLSMarker.maximumBodySize) bytes of JSON")
            }
            await hub.mark(range)
            return Response(status: .noContent)
        }
    }

    private func authorizeMarker(_ request: Request, sessionId: String) async throws {
        let presented = bearer(request) ?? ""
        if constantTimeEqual(presented, configuration.secret) { return }
        guard !presented.isEmpty else {
            throw HTTPError(.unauthorized, message: "markers need the relay secret or a moderator token of the session: Authorization: Bearer …")
        }
        let grant: SessionGrant
        do {
            grant = try await tokens.verify(presented, sessionId: sessionId)
        } catch {
            throw HTTPError(.unauthorized, message: "\(error.kind.rawValue): \(error.message)")
        }
        guard grant.role == .moderator else {
            throw HTTPError(.forbidden, message: "a \(grant.role.rawValue) token cannot post markers; a moderator token or the relay secret can")
        }
    }

    private func hlsResponse(file: String, hub: SessionHub, query: String) async throws -> Response {
        switch file {
        case "index.m3u8", "stream.m3u8":
            let packager = await hub.startHLS(hlsConfiguration)
            packager.touch()
            // A player's first request waits for the first segment rather than failing.
            let wait = Duration.milliseconds(Int((packager.configuration.segmentSeconds * 3 + 10) * 1000))
            guard await packager.waitForFirstSegment(timeout: wait) else {
                throw HTTPError(.serviceUnavailable, message: "the session has no screen stream to package yet; try again when someone shares")
            }
            let snapshot = packager.snapshot
            let text = file == "index.m3u8"
                ? HLSPlaylist.multivariant(snapshot, query: query)
                : HLSPlaylist.media(snapshot, targetDuration: packager.configuration.targetDuration, query: query)
            return Self.hlsBody(Array(text.utf8), type: "application/vnd.apple.mpegurl", cache: "no-cache")
        default:
            guard let packager = await hub.hls else {
                throw HTTPError(.notFound, message: "HLS is not running for this session: request index.m3u8 first")
            }
            packager.touch()
            let snapshot = packager.snapshot
            if let number = Self.number(in: file, prefix: "init-", suffix: ".mp4"), let bytes = snapshot.initializations[number] {
                return Self.hlsBody(bytes, type: "video/mp4", cache: "max-age=3600")
            }
            if let number = Self.number(in: file, prefix: "seg-", suffix: ".m4s"),
                let segment = snapshot.segments.first(where: { $0.sequence == number }) ?? snapshot.retired.first(where: { $0.sequence == number })
            {
                return Self.hlsBody(segment.bytes, type: "video/iso.segment", cache: "max-age=3600")
            }
            throw HTTPError(.notFound, message: "\(file) is not (or no longer) in this session's HLS window")
        }
    }

    /// Checks the caller may watch `sessionId`; the query to append to URIs (the token, when it came that way).
    private func authorizeHLS(_ request: Request, sessionId: String) async throws -> String {
        let header = bearer(request)
        if let header, constantTimeEqual(header, configuration.secret) { return "" }
        let fromQuery = request.uri.queryParameters["token"].map(String.init)
        guard let presented = header ?? fromQuery, !presented.isEmpty else {
            throw HTTPError(.unauthorized, message: "HLS needs a token of the session: ?token=… or Authorization: Bearer …")
        }
        do {
            _ = try await tokens.verify(presented, sessionId: sessionId)
        } catch {
            throw HTTPError(.unauthorized, message: "\(error.kind.rawValue): \(error.message)")
        }
        guard header == nil, let fromQuery else { return "" }
        return "?token=" + (fromQuery.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "+", "="])) ?? fromQuery)
    }

    private static func hlsBody(_ bytes: [UInt8], type: String, cache: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: cache, .accessControlAllowOrigin: "*"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `N` of `prefixNsuffix`.
    private static func number(in file: String, prefix: String, suffix: String) -> Int? {
        guard file.hasPrefix(prefix), file.hasSuffix(suffix) else { return nil }
        return Int(file.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
