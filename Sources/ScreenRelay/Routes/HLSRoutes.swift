import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Logging
import ScreenWire

/// HLS of a session's screen stream (docs/protocol.md): `index.m3u8` (multivariant), `stream.m3u8` (media, with
/// LL-HLS parts, blocking reload and delta updates), `init-N.mp4`, `seg-N.m4s` and `part-N.P.m4s`, for any token
/// of the session (or the relay secret), given as `Authorization: Bearer …` or `?token=` (which the playlists
/// then carry into every URI they name). Packaging starts with the first request for a playlist, which waits for
/// the first two segments, and stops a while after the last request. Also the session's timed markers, which its
/// HLS timeline carries.
struct HLSRoutes: RelayRoutes {
    let secret: RelaySecretCheck
    let tokens: TokenAuthority
    let registry: SessionRegistry
    /// How a session's HLS is packaged when a player starts it.
    let hlsConfiguration: HLSPackager.Configuration
    /// `--hls-waiting-per-client`.
    let waitingRequestsPerClient: Int
    /// `--trust-proxy`: the peers whose forwarded client a waiting request is counted against.
    let trustedProxies: Set<String>
    let requestRates: RequestRateLimiter
    let metrics: RelayMetrics
    let logger: Logger

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.get("/hls/{session}/{file}") { request, context -> Response in
            let sessionId = try context.parameters.require("session")
            let file = try context.parameters.require("file")
            // Authorised before anything else: a request without a valid token never takes a waiting place.
            let (query, token) = try await authorizeHLS(request, sessionId: sessionId)
            let hub = try await registry.existingHub(sessionId)
            let client = waitingClient(token: token, request: request, channel: context.channel)
            return try await hlsResponse(file: file, hub: hub, query: query, request: request, client: client, channel: context.channel)
        }
        // A timed marker (an ad break, a chapter) for the session's HLS timeline: the secret or a moderator token.
        router.post("/session/{id}/marker") { request, context -> Response in
            let sessionId = try context.parameters.require("id")
            try await authorizeMarker(request, sessionId: sessionId)
            let hub = try await registry.existingHub(sessionId)
            try requestRates.spend(.marker, session: sessionId, metrics: metrics)
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
        if secret.isPresented(in: request) { return }
        let presented = request.bearerToken ?? ""
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

    /// `index`: answer the multivariant playlist (after waiting for the stream as `stream.m3u8`'s first request does).
    private func hlsResponse(
        file: String, hub: SessionHub, query: String, request: Request, client: HLSWaitingRequests.Client, channel: any Channel, index: Bool = false
    ) async throws -> Response {
        switch file {
        case "index.m3u8" where await hub.hls(h264: false) == nil:
            // Answered from what the publisher announced: packaging the stream (and asking its publisher for a
            // keyframe every segment) waits until a player reads its own playlist.
            if let announced = await hub.hlsAnnouncedVariant() {
                let text = HLSPlaylist.multivariant(HLSPlaylist.Variant.listed(announced, h264: await hub.hlsH264Variant(beside: announced)), query: query)
                return Self.hlsBody(Array(text.utf8), type: "application/vnd.apple.mpegurl", cache: "no-cache")
            }
            // No screen stream yet: the request waits for one, packaged, as a media playlist's first request does.
            return try await hlsResponse(file: "stream.m3u8", hub: hub, query: query, request: request, client: client, channel: channel, index: true)
        case "index.m3u8", "stream.m3u8", HLSPlaylist.h264Playlist:
            let h264 = file == HLSPlaylist.h264Playlist
            if h264, await !hub.hlsHasH264 {
                throw HTTPError(
                    .notFound,
                    message: "this session's stream has no H.264 variant: its publisher offers no H.264 rendition (screenpub --rendition h264, the default, does)")
            }
            let packager = await hub.startHLS(hlsConfiguration, h264: h264)
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
            if let position = directives.position, file != "index.m3u8" {
                // A blocking reload: answered once that part or segment is out.
                if let reason = HLSDeliveryDirectives.tooFarAhead(position, of: packager.snapshot) {
                    throw HTTPError(.badRequest, message: "bad LL-HLS request: \(reason)")
                }
                try check(await waitForPart(position, packager: packager, client: client, channel: channel), packager: packager, client: client, session: hub.sessionId)
            } else {
                // A player's first request waits for the first two segments rather than failing: a waiting request
                // like a blocking reload, within the same shares.
                let outcome = await waitForStart(packager: packager, client: client, channel: channel)
                if outcome == .timedOut || (outcome == .ready && !packager.hasStartSegments) {
                    throw HTTPError(.serviceUnavailable, message: Self.notPlayable(packager.snapshot, h264: h264, configuration: packager.configuration))
                }
                try check(outcome, packager: packager, client: client, session: hub.sessionId)
            }
            let snapshot = packager.snapshot
            let configuration = packager.configuration
            let text: String
            if file == "index.m3u8" || index {
                let primary = HLSPlaylist.Variant(snapshot, uri: "stream.m3u8")
                text = HLSPlaylist.multivariant(HLSPlaylist.Variant.listed(primary, h264: await hub.hlsH264Variant(beside: primary)), query: query)
            } else {
                text = HLSPlaylist.media(
                    snapshot, targetDuration: configuration.targetDuration, query: query, prefix: h264 ? HLSPlaylist.h264Prefix : "",
                    lowLatency: .init(
                        partTarget: configuration.partSeconds, partHoldBack: configuration.partHoldBack, skipBoundary: configuration.skipBoundary,
                        skip: directives.skip))
            }
            return Self.hlsBody(Array(text.utf8), type: "application/vnd.apple.mpegurl", cache: "no-cache")
        default:
            let h264 = file.hasPrefix(HLSPlaylist.h264Prefix)
            let asked = file
            let file = h264 ? String(file.dropFirst(HLSPlaylist.h264Prefix.count)) : file
            guard let packager = await hub.hls(h264: h264) else {
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
                    try check(await waitForPart(position, packager: packager, client: client, channel: channel), packager: packager, client: client, session: hub.sessionId)
                    snapshot = packager.snapshot
                }
                if let part = snapshot.part(segment: segment, index: index) {
                    return Self.hlsBody(part.bytes, type: "video/iso.segment", cache: "max-age=3600")
                }
            }
            throw HTTPError(.notFound, message: "\(asked.prefix(80)) is not (or no longer) in this session's HLS window")
        }
    }

    /// Waits for `position` (a blocking reload, a hinted part) in one of the session's places, at most
    /// ``RelayConfiguration/hlsWaitingRequestsPerClient`` of them `client`'s; given back as soon as the client
    /// closes its connection.
    private func waitForPart(
        _ position: HLSSnapshot.Position, packager: HLSPackager, client: HLSWaitingRequests.Client, channel: any Channel
    ) async -> HLSWaitingRequests.Outcome {
        let (waiting, timeout, clientLimit) = (packager.waiting, packager.configuration.blockingWait, waitingRequestsPerClient)
        let outcome = await ClientGoneWatch.whileConnected(channel) {
            await waiting.wait(for: position, client: client, clientLimit: clientLimit, timeout: timeout) { position in
                packager.snapshot.holds(position)
            }
        }
        // Nobody reads an answer: the socket goes now rather than after one is written to it.
        if outcome == .gone { channel.close(promise: nil) }
        return outcome
    }

    /// Waits for the first two segments of a variant that is starting, in one of its waiting places (as
    /// ``waitForPart(_:packager:client:channel:)`` does), for a few segment durations.
    private func waitForStart(packager: HLSPackager, client: HLSWaitingRequests.Client, channel: any Channel) async -> HLSWaitingRequests.Outcome {
        let clientLimit = waitingRequestsPerClient
        let outcome = await ClientGoneWatch.whileConnected(channel) {
            await packager.waitUntilPlayable(client: client, clientLimit: clientLimit)
        }
        if outcome == .gone { channel.close(promise: nil) }
        return outcome
    }

    /// A wait that did not end with what it waited for, as the HTTP answer a player expects (503: try again; a
    /// refusal says after how long). A refusal is counted, and said in the log at most once a minute a session.
    private func check(_ outcome: HLSWaitingRequests.Outcome, packager: HLSPackager, client: HLSWaitingRequests.Client, session label: String) throws {
        switch outcome {
        case .ready: return
        case .timedOut:
            throw HTTPError(.serviceUnavailable, message: "nothing new in \(packager.configuration.blockingWait): the stream has stopped sending; try again")
        case .tooMany:
            let total = packager.configuration.maximumWaitingRequests
            try refuse(
                .hlsWaiting, packager: packager,
                log: "refusing LL-HLS requests of session \(label): \(total) wait already, the most a session lets wait",
                answer: "\(total) players already wait on this playlist of the session's HLS, the most it lets wait; try again")
        case .tooManyFromClient:
            let share = waitingRequestsPerClient
            try refuse(
                .hlsWaitingPerClient, packager: packager,
                log: "refusing LL-HLS requests of session \(label) from \(client.address): \(share) of that token's requests from there wait already, the most one client may (--hls-waiting-per-client)",
                answer: "\(share) of your requests already wait on this playlist of the session's HLS, the most one client may; try again when one is answered")
        case .tooManyFromToken:
            let share = packager.waiting.tokenLimit
            try refuse(
                .hlsWaitingPerToken, packager: packager,
                log: "refusing LL-HLS requests of session \(label) for one token: \(share) of its clients' requests wait already, half of what a variant lets wait",
                answer: "\(share) requests made with your link already wait on this playlist, the most one link's viewers may together; try again (a link given to many: ask for links of your own)")
        case .stopped:
            throw HTTPError(.serviceUnavailable, message: "HLS of this session stopped; request index.m3u8 again")
        case .gone:
            // Nobody reads the answer; the place is free already.
            throw HTTPError(.serviceUnavailable, message: "the client closed its connection")
        }
    }

    /// A waiting request refused at once for a full share: counted under `limit`, said in the log at most once a
    /// minute a variant (with how many since), answered 503 with `Retry-After: 1`.
    private func refuse(_ limit: RelayLimit, packager: HLSPackager, log: String, answer: String) throws -> Never {
        metrics.refused(limit)
        if let refused = packager.waiting.refusalToLog() {
            logger.warning("\(log) (\(refused) refused since this was last said; said at most once a minute)")
        }
        throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"], message: answer)
    }

    /// Checks the caller may watch `sessionId`; the query to append to URIs (the token, when it came that way),
    /// and the token it showed (what its waiting requests are counted by; the relay secret as one name for it).
    private func authorizeHLS(_ request: Request, sessionId: String) async throws -> (query: String, token: String) {
        if secret.isPresented(in: request) { return ("", "the relay secret") }
        let header = request.bearerToken
        let fromQuery = request.queryToken
        guard let presented = header ?? fromQuery, !presented.isEmpty else {
            throw HTTPError(.unauthorized, message: "HLS needs a token of the session: ?token=… or Authorization: Bearer …")
        }
        do {
            _ = try await tokens.verify(presented, sessionId: sessionId)
        } catch {
            throw HTTPError(.unauthorized, message: "\(error.kind.rawValue): \(error.message)")
        }
        guard header == nil, let fromQuery else { return ("", presented) }
        return ("?token=" + (fromQuery.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "+", "="])) ?? fromQuery), presented)
    }

    /// The client a waiting LL-HLS request is counted against: the token it showed and its address — the
    /// connection's peer, or, when the peer is a proxy named by `--trust-proxy`, the client that proxy forwards
    /// (``ForwardedClient``). An untrusted peer's `X-Forwarded-For` is its own words, and ignored.
    private func waitingClient(token: String, request: Request, channel: any Channel) -> HLSWaitingRequests.Client {
        let peer = channel.remoteAddress?.ipAddress
        return .init(token: token, address: ForwardedClient.behindProxy(request, peer: peer, trusted: trustedProxies) ?? peer ?? "?")
    }

    /// Why a first request found no two segments to list: nothing came, or what came did not fit the memory budget.
    static func notPlayable(_ snapshot: HLSSnapshot, h264: Bool, configuration: HLSPackager.Configuration) -> String {
        if snapshot.droppedForMemory > 0 {
            return "the stream's frames are too large for this relay's HLS: its segments do not fit the \(configuration.sessionMemoryBytes >> 20) MiB a variant may hold (--hls-session-memory); try again later, or watch with the viewer page"
        }
        return h264
            ? "the H.264 variant has not started: the publisher has not sent its H.264 rendition; try again"
            : "the session has no screen stream to package yet; try again when someone shares"
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
