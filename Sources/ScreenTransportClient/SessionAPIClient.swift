import Foundation
public import ScreenTransport
public import ScreenWire

/// The relay's session API as a client, with the relay secret: what `screenrelay session|sessions|token|archive`
/// call, and how `screenpub --server http(s)://…` makes its session. Every failure is a ``SessionAPIError``
/// whose message a person can act on.
public struct SessionAPIClient: Sendable {
    /// `http(s)://host:port`, without a trailing slash.
    public let server: String
    private let secret: String
    private var http: RelayHTTPClient

    public init(server: String, secret: String, trust: ClientTrust = .system) {
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.secret = secret
        http = RelayHTTPClient(trust: trust)
    }

    public func createSession(title: String?) async throws(SessionAPIError) -> SessionCredentials {
        let body = try encode(SessionRequest(title: title ?? ""))
        return try await call("POST", "/session", json: body, as: SessionCredentials.self)
    }

    public func sessions() async throws(SessionAPIError) -> [SessionSummary] {
        try await call("GET", "/session", as: Items<SessionSummary>.self).items
    }

    public func mintToken(
        session: String, role: Role, name: String?, data: String?, expiresIn seconds: Double
    ) async throws(SessionAPIError) -> TokenMinted {
        let body = try encode(TokenRequest(role: role.rawValue, expiresIn: seconds, data: ConnectionData.with(name: name, extra: data)))
        return try await call("POST", "/session/\(session.percentEncodedComponent)/token", json: body, as: TokenMinted.self)
    }

    public func archives(session: String?) async throws(SessionAPIError) -> [Archive] {
        let query = session.map { "?sessionId=\($0.percentEncodedComponent)" } ?? ""
        return try await call("GET", "/archive" + query, as: Items<Archive>.self).items
    }

    public func startArchive(session: String, name: String?) async throws(SessionAPIError) -> Archive {
        return try await call("POST", "/archive", json: try encode(ArchiveStartRequest(sessionId: session, name: name)), as: Archive.self)
    }

    public func stopArchive(_ id: String) async throws(SessionAPIError) -> Archive {
        try await call("POST", "/archive/\(id.percentEncodedComponent)/stop", as: Archive.self)
    }

    public func deleteArchive(_ id: String) async throws(SessionAPIError) {
        _ = try await send("DELETE", "/archive/\(id.percentEncodedComponent)")
    }

    /// Writes one stream of an archive (a WebM, or a Matroska file for H.264) to `path`, through `path.part`
    /// renamed when complete; returns where it went (`path`, but `.mkv` for a `.webm` name that the relay answers
    /// with Matroska: WebM cannot carry H.264, and players trust the name) and its size in bytes.
    public func downloadArchive(_ id: String, stream: Int, to path: String) async throws(SessionAPIError) -> (path: String, bytes: Int) {
        try await downloadArchive(id, stream: stream, partial: path + ".part") { response in
            guard Self.isMatroska(response), path.lowercased().hasSuffix(".webm") else { return path }
            return String(path.dropLast(5)) + ".mkv"
        }
    }

    /// Writes one stream of an archive to `base` and the suffix its media type says (`.mkv` for Matroska, else
    /// `.webm`); returns that path and the size in bytes.
    public func downloadArchive(_ id: String, stream: Int, named base: String) async throws(SessionAPIError) -> (path: String, bytes: Int) {
        try await downloadArchive(id, stream: stream, partial: base + ".part") { response in
            base + (Self.isMatroska(response) ? ".mkv" : ".webm")
        }
    }

    private static func isMatroska(_ response: RelayHTTPClient.Response) -> Bool {
        response.header("Content-Type")?.lowercased().hasPrefix("video/x-matroska") == true
    }

    private func downloadArchive(
        _ id: String, stream: Int, partial: String, path named: (RelayHTTPClient.Response) -> String
    ) async throws(SessionAPIError) -> (path: String, bytes: Int) {
        guard FileManager.default.createFile(atPath: partial, contents: nil), let file = FileHandle(forWritingAtPath: partial) else {
            // Named as asked (without its ".part"): the final name may wait for the answer.
            throw SessionAPIError("cannot write \(partial.dropLast(5)): \(String(cString: strerror(errno)))")
        }
        var downloader = http
        downloader.timeoutSeconds = 24 * 3600
        let response: RelayHTTPClient.Response
        do {
            response = try await downloader.download(server + "/archive/\(id.percentEncodedComponent)/download?stream=\(stream)", bearer: secret, to: file)
            try file.close()
        } catch {
            try? file.close()
            try? FileManager.default.removeItem(atPath: partial)
            throw SessionAPIError(Self.explain(error, server: server))
        }
        guard (200..<300).contains(response.status) else {
            try? FileManager.default.removeItem(atPath: partial)
            throw SessionAPIError(Self.refusal(response))
        }
        let path = named(response)
        do {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch {
            throw SessionAPIError("cannot write \(path): \(error.localizedDescription)")
        }
        return (path, ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0)
    }

    // MARK: Plumbing

    private struct Items<Item: Decodable>: Decodable { var items: [Item] }

    private func call<Answer: Decodable>(_ method: String, _ path: String, json: Data? = nil, as type: Answer.Type) async throws(SessionAPIError)
        -> Answer
    {
        let response = try await send(method, path, json: json)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: response.body)
        } catch {
            throw SessionAPIError("the server at \(server) answered \(method) \(path) with something that is not a screenrelay's answer: is --server a screenrelay?")
        }
    }

    private func send(_ method: String, _ path: String, json: Data? = nil) async throws(SessionAPIError) -> RelayHTTPClient.Response {
        let response: RelayHTTPClient.Response
        do {
            response = try await http.send(method, server + path, bearer: secret, json: json)
        } catch {
            throw SessionAPIError(Self.explain(error, server: server))
        }
        guard (200..<300).contains(response.status) else { throw SessionAPIError(Self.refusal(response)) }
        return response
    }

    private func encode(_ value: some Encodable) throws(SessionAPIError) -> Data {
        do { return try JSONEncoder().encode(value) } catch { throw SessionAPIError("cannot encode the request: \(error)") }
    }

    static func explain(_ error: any Error, server: String) -> String {
        let message = (error as? RelayClientError)?.message ?? "\(error)"
        return "\(message) (is screenrelay running there? give its address with --server URL)"
    }

    /// The relay's own sentence (`{"error": {"message": …}}`), with what the status means.
    static func refusal(_ response: RelayHTTPClient.Response) -> String {
        struct Failure: Decodable {
            struct Detail: Decodable { var message: String }
            var error: Detail
        }
        let said = (try? JSONDecoder().decode(Failure.self, from: response.body))?.error.message
            ?? String(decoding: response.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        switch response.status {
        case 401: return "the relay refused the secret (\(said)): use the secret the relay reads (--secret-file, $SCREENRELAY_SECRET)"
        case 404: return said.isEmpty ? "not found (HTTP 404)" : said
        default: return said.isEmpty ? "the relay answered HTTP \(response.status)" : said
        }
    }
}

/// Why a call of the session API failed, in a sentence.
public struct SessionAPIError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
