import Foundation
import HTTPTypes
import Hummingbird
import ScreenWire

/// HLS of a session's screen stream (docs/protocol.md): `index.m3u8` (multivariant), `stream.m3u8` (media, with
/// LL-HLS parts, blocking reload and delta updates), `init-N.mp4`, `seg-N.m4s` and `part-N.P.m4s`, for any token
/// of the session (or the relay secret), given as `Authorization: Bearer …` or `?token=` (which the playlists
/// then carry into every URI they name). Packaging starts with the first request for a playlist, which waits for
/// the first two segments, and stops a while after the last request.
extension RelayServer {
    func addHLSRoutes(_ router: Router<RelayRequestContext>) {
        router.get("/hls/{session}/{file}") { [self] request, context -> Response in
            let sessionId = try context.parameters.require("session")
            let file = try context.parameters.require("file")
            let query = try await authorizeHLS(request, sessionId: sessionId)
            guard let hub = await registry.hub(sessionId) else {
                throw HTTPError(.notFound, message: "there is no session \(sessionId)")
            }
            return try await hlsResponse(file: file, hub: hub, query: query, request: request)
        }
        // A timed marker (an ad break, a chapter) for the session's HLS timeline: the secret or a moderator token.
        router.post("/session/{id}/marker") { [self] request, context -> Response in
            let sessionId = try context.parameters.require("id")
            try await authorizeMarker(request, sessionId: sessionId)
            guard let hub = await registry.hub(sessionId) else { throw HTTPError(.notFound, message: "there is no session \(sessionId)") }
            try takeRequestAllowance(.marker, session: sessionId)
            let range: HLSSnapshot.DateRange
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

    private func hlsResponse(file: String, hub: SessionHub, query: String, request: Request) async throws -> Response {
        switch file {
        case "index.m3u8", "stream.m3u8":
            let packager = await hub.startHLS(hlsConfiguration)
            packager.touch()
            let parameters = request.uri.queryParameters
            let directives: HLSDeliveryDirectives
            do {
                directives = try HLSDeliveryDirectives(
                    msn: parameters["_HLS_msn"].map(String.init), part: parameters["_HLS_part"].map(String.init),
                    skip: parameters["_HLS_skip"].map(String.init))
            } catch {
                throw HTTPError(.badRequest, message: "bad LL-HLS request: \(error.reason)")
            }
            if let position = directives.position, file == "stream.m3u8" {
                // A blocking reload: answered once that part or segment is out.
                if let reason = HLSDeliveryDirectives.tooFarAhead(position, of: packager.snapshot) {
                    throw HTTPError(.badRequest, message: "bad LL-HLS request: \(reason)")
                }
                try Self.check(await packager.wait(for: position), packager: packager)
            } else {
                // A player's first request waits for the first two segments rather than failing.
                let wait = Duration.milliseconds(Int((packager.configuration.segmentSeconds * 3 + 10) * 1000))
                guard await packager.waitUntilPlayable(timeout: wait) else {
                    throw HTTPError(.serviceUnavailable, message: "the session has no screen stream to package yet; try again when someone shares")
                }
            }
            let snapshot = packager.snapshot
            let configuration = packager.configuration
            let text = file == "index.m3u8"
                ? HLSPlaylist.multivariant(snapshot, query: query)
                : HLSPlaylist.media(
                    snapshot, targetDuration: configuration.targetDuration, query: query,
                    lowLatency: .init(
                        partTarget: configuration.partSeconds, partHoldBack: configuration.partHoldBack, skipBoundary: configuration.skipBoundary,
                        skip: directives.skip))
            return Self.hlsBody(Array(text.utf8), type: "application/vnd.apple.mpegurl", cache: "no-cache")
        default:
            guard let packager = await hub.hls else {
                throw HTTPError(.notFound, message: "HLS is not running for this session: request index.m3u8 first")
            }
            packager.touch()
            var snapshot = packager.snapshot
            if let number = Self.number(in: file, prefix: "init-", suffix: ".mp4"), let bytes = snapshot.initializations[number] {
                return Self.hlsBody(bytes, type: "video/mp4", cache: "max-age=3600")
            }
            if let number = Self.number(in: file, prefix: "seg-", suffix: ".m4s"), let segment = snapshot.segment(number) {
                return Self.hlsBody(segment.bytes, type: "video/iso.segment", cache: "max-age=3600")
            }
            if let (segment, index) = Self.number(in: file, prefix: "part-", suffix: ".m4s", separator: ".") {
                let position = HLSSnapshot.Position(segment: segment, part: index)
                if !snapshot.holds(position), HLSDeliveryDirectives.tooFarAhead(position, of: snapshot) == nil {
                    // A part named by EXT-X-PRELOAD-HINT: answered as soon as it is out.
                    try Self.check(await packager.wait(for: position), packager: packager)
                    snapshot = packager.snapshot
                }
                if let part = snapshot.part(segment: segment, index: index) {
                    return Self.hlsBody(part.bytes, type: "video/iso.segment", cache: "max-age=3600")
                }
            }
            throw HTTPError(.notFound, message: "\(file) is not (or no longer) in this session's HLS window")
        }
    }

    /// A wait that did not end with what it waited for, as the HTTP answer a player expects (503: try again).
    private static func check(_ outcome: HLSWaitingRequests.Outcome, packager: HLSPackager) throws {
        switch outcome {
        case .ready: return
        case .timedOut:
            throw HTTPError(.serviceUnavailable, message: "nothing new in \(packager.configuration.blockingWait): the stream has stopped sending; try again")
        case .tooMany:
            throw HTTPError(
                .serviceUnavailable,
                message: "\(packager.configuration.maximumWaitingRequests) players already wait on this session's HLS, the most it lets wait; try again")
        case .stopped:
            throw HTTPError(.serviceUnavailable, message: "HLS of this session stopped; request index.m3u8 again")
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
        guard file.hasPrefix(prefix), file.hasSuffix(suffix), file.utf8.count <= 64 else { return nil }
        return Int(file.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// `N` and `P` of `prefixN<separator>Psuffix`.
    private static func number(in file: String, prefix: String, suffix: String, separator: Character) -> (Int, Int)? {
        guard file.hasPrefix(prefix), file.hasSuffix(suffix), file.utf8.count <= 64 else { return nil }
        let numbers = file.dropFirst(prefix.count).dropLast(suffix.count).split(separator: separator, omittingEmptySubsequences: false)
        guard numbers.count == 2, let first = Int(numbers[0]), let second = Int(numbers[1]), first >= 0, second >= 0 else { return nil }
        return (first, second)
    }
}
