import Foundation
import ScreenTransport
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import ScreenMedia
import ScreenRecording
import ScreenWire

/// The archive API (docs/protocol.md, README): guarded by the relay secret or a moderator token of the
/// archive's session, given as `Authorization: Bearer …` or, for pages and players that cannot set headers,
/// as `?token=`.
struct ArchiveRoutes: RelayRoutes {
    let secret: RelaySecretCheck
    let tokens: TokenAuthority
    /// Nil without a data directory: then every call says so.
    let archives: ArchiveManager?
    let requestRates: RequestRateLimiter
    let metrics: RelayMetrics

    /// Who is calling: the server side (the secret) or a moderator of one session.
    enum ArchiveCaller {
        case server
        case moderator(sessionId: String)

        func mayAccess(_ sessionId: String) -> Bool {
            switch self {
            case .server: true
            case .moderator(let own): own == sessionId
            }
        }
    }

    private func archiveCaller(_ request: Request) async throws -> ArchiveCaller {
        // The secret only ever as `Authorization: Bearer` (a URL ends up in logs and histories); a moderator
        // token may also come as `?token=` (the archive page's video element cannot set headers).
        if secret.isPresented(in: request) { return .server }
        let presented = request.bearerToken ?? request.queryToken ?? ""
        guard !presented.isEmpty else {
            throw HTTPError(.unauthorized, message: "archives need the relay secret or a moderator token: Authorization: Bearer <secret or token>")
        }
        let grant: SessionGrant
        do {
            grant = try await tokens.verify(presented)
        } catch {
            throw HTTPError(.unauthorized, message: "\(error.kind.rawValue): \(error.message)")
        }
        guard grant.role == .moderator else {
            throw HTTPError(.forbidden, message: "a \(grant.role.rawValue) token cannot use archives; a moderator token or the relay secret can")
        }
        return .moderator(sessionId: grant.sessionId)
    }

    private func manager() throws -> ArchiveManager {
        guard let archives else {
            throw HTTPError(.serviceUnavailable, message: "this relay keeps no archives: start it with a data directory (--data-dir)")
        }
        return archives
    }

    /// The archive `id` if the caller may see it.
    private func archive(_ id: String, for caller: ArchiveCaller) async throws -> Archive {
        guard let archive = try await manager().archive(id), caller.mayAccess(archive.sessionId) else {
            throw HTTPError(.notFound, message: "there is no archive \(id)")
        }
        return archive
    }

    /// `Content-Disposition: attachment` for any name (RFC 6266): a plain-ASCII `filename` with quotes,
    /// backslashes and what is not printable ASCII replaced, and the exact name as `filename*` (RFC 8187).
    static func attachment(filename: String) -> String {
        let fallback = String(filename.unicodeScalars.map { scalar -> Character in
            (0x20..<0x7F).contains(scalar.value) && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
        })
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(filename.percentEncodedComponent)"
    }

    private static func translate(_ error: any Error) -> any Error {
        guard let failure = error as? RelayError else { return error }
        switch failure.kind {
        case .notFound: return HTTPError(.notFound, message: failure.message)
        case .conflict: return HTTPError(.conflict, message: failure.message)
        case .badRequest: return HTTPError(.badRequest, message: failure.message)
        case .quota: return HTTPError(.init(code: 507, reasonPhrase: "Insufficient Storage"), message: failure.message)
        case .storage, .dataDirectoryInUse, .cannotListen, .badCertificate, .badSecret: return HTTPError(.internalServerError, message: failure.message)
        }
    }

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.post("/archive") { request, context -> Response in
            let caller = try await archiveCaller(request)
            let body: ArchiveStartRequest
            do {
                body = try await request.decode(as: ArchiveStartRequest.self, context: context)
            } catch {
                throw HTTPError(.badRequest, message: "the body must be JSON: {\"sessionId\": …, \"name\": … (optional)}")
            }
            guard caller.mayAccess(body.sessionId) else { throw HTTPError(.forbidden, message: "the token is for another session") }
            try requestRates.spend(.archive, session: body.sessionId, metrics: metrics)
            do {
                return try .json(try await manager().start(sessionId: body.sessionId, name: body.name))
            } catch {
                throw Self.translate(error)
            }
        }
        router.post("/archive/{id}/stop") { request, context -> Response in
            let archive = try await archive(try context.parameters.require("id"), for: try await archiveCaller(request))
            try requestRates.spend(.archive, session: archive.sessionId, metrics: metrics)
            do {
                return try .json(try await manager().stop(archive.id, reason: "stopped through the API"))
            } catch {
                throw Self.translate(error)
            }
        }
        router.get("/archive") { request, _ -> Response in
            let caller = try await archiveCaller(request)
            var sessionId = request.uri.queryParameters["sessionId"].map(String.init)
            if case .moderator(let own) = caller {
                guard sessionId == nil || sessionId == own else { throw HTTPError(.forbidden, message: "the token is for another session") }
                sessionId = own
            }
            return try .json(["items": try await manager().list(sessionId: sessionId)])
        }
        router.get("/archive/{id}") { request, context -> Response in
            try .json(try await archive(try context.parameters.require("id"), for: try await archiveCaller(request)))
        }
        router.delete("/archive/{id}") { request, context -> Response in
            let archive = try await archive(try context.parameters.require("id"), for: try await archiveCaller(request))
            let archives = try manager()
            if archive.status == .started { _ = try? await archives.stop(archive.id, reason: "deleted") }
            try archives.store.delete(archive.id)
            return Response(status: .noContent)
        }
        router.get("/archive/{id}/download") { request, context -> Response in
            let archive = try await archive(try context.parameters.require("id"), for: try await archiveCaller(request))
            return try await download(archive, request: request, context: context)
        }
        router.get("/archive/{id}/metadata") { request, context -> Response in
            let archive = try await archive(try context.parameters.require("id"), for: try await archiveCaller(request))
            guard let file = try manager().store.files(of: archive.id).first else {
                throw HTTPError(.notFound, message: "archive \(archive.id) has no recorded frames")
            }
            return try .json(try Self.metadataCues(of: file.path))
        }
    }

    /// One stream's WebM or Matroska file (`?stream=N`, default the first), with single byte ranges for players that seek.
    private func download(_ archive: Archive, request: Request, context: RelayRequestContext) async throws -> Response {
        let files = try manager().store.files(of: archive.id)
        let index = request.uri.queryParameters["stream"].flatMap { Int($0) } ?? 0
        guard files.indices.contains(index) else { throw HTTPError(.notFound, message: "archive \(archive.id) has no stream \(index)") }
        let path = files[index].path
        let size = RelayStore.size(of: [files[index]])
        let container = RecordingContainer.allCases.first { $0.fileExtension == files[index].pathExtension } ?? .webm
        var headers: HTTPFields = [
            .contentType: container.mediaType, .acceptRanges: "bytes",
            .contentDisposition: Self.attachment(
                filename: "\(archive.name.isEmpty ? archive.id : archive.name)-\(index).\(container.fileExtension)"),
        ]
        let fileIO = FileIO()
        if let range = request.headers[.range].flatMap({ Self.byteRange($0, size: size) }) {
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = "\(range.count)"
            return Response(
                status: .partialContent, headers: headers, body: try await fileIO.loadFile(path: path, range: range, context: context))
        }
        headers[.contentLength] = "\(size)"
        return Response(status: .ok, headers: headers, body: try await fileIO.loadFile(path: path, context: context))
    }

    /// `bytes=START-END` or `bytes=START-` or `bytes=-SUFFIX`, clamped to the file; nil when unusable.
    static func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
        guard size > 0, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let lower: Int, upper: Int
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            lower = max(0, size - suffix)
            upper = size - 1
        } else {
            guard let start = Int(parts[0]), start < size else { return nil }
            lower = start
            upper = parts[1].isEmpty ? size - 1 : min(size - 1, Int(parts[1]) ?? -1)
        }
        return lower <= upper ? lower...upper : nil
    }

    struct Cue: Encodable {
        var index: Int
        /// Seconds from the start of the file (the video's timeline).
        var time: Double
        var keyframe: Bool
        var captureTime: String
        var wallClock: String
        var metadata: String?
        var metadataBase64: String
    }

    /// Every frame's metadata cue, in order, from the file's metadata track.
    static func metadataCues(of path: String) throws -> [Cue] {
        let reader = try WebMReader(path: path)
        var cues: [Cue] = []
        while let frame = try reader.nextFrame() {
            guard let cue = frame.cue else { continue }
            cues.append(Cue(
                index: frame.index, time: frame.timestamp.seconds, keyframe: frame.isKeyframe, captureTime: cue.captureTime.description,
                wallClock: FrameMetadata.iso8601(cue.wallClock).text ?? "", metadata: cue.metadata.text,
                metadataBase64: Data(cue.metadata.bytes).base64EncodedString()))
        }
        return cues
    }
}
