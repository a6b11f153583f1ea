import Foundation
public import ScreenRelay
public import ScreenTransport
public import ScreenWire

/// The relay's HTTP API as `screenrelay session|sessions|token|archive` use it, with the relay secret.
/// Every failure is a ``RelayAdminError`` whose message a person can act on.
public struct RelayAdminClient: Sendable {
    /// `http(s)://host:port`, without a trailing slash.
    public let server: String
    private let secret: String
    private var http: RelayHTTPClient

    public init(server: String, secret: String, trust: ClientTrust = .system) {
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.secret = secret
        http = RelayHTTPClient(trust: trust)
    }

    /// What `POST /session` answers: the new session, its publisher's token and the links.
    public struct CreatedSession: Sendable, Codable, Equatable {
        public var sessionId: String
        public var token: String
        public var relayURL: String
        public var viewerURL: String
    }

    /// What `POST /session/{id}/token` answers.
    public struct MintedToken: Sendable, Codable, Equatable {
        public var sessionId: String
        public var token: String
        public var role: Role
        public var expiresAt: String
        /// The viewer page with this token, for subscribers and moderators.
        public var viewerURL: String?
    }

    public func createSession(title: String?) async throws(RelayAdminError) -> CreatedSession {
        let body = try encode(["title": title ?? ""])
        return try await call("POST", "/session", json: body, as: CreatedSession.self)
    }

    public func sessions() async throws(RelayAdminError) -> [SessionSummary] {
        try await call("GET", "/session", as: Items<SessionSummary>.self).items
    }

    public func mintToken(
        session: String, role: Role, name: String?, data: String?, expiresIn seconds: Double
    ) async throws(RelayAdminError) -> MintedToken {
        struct Request: Encodable {
            var role: String
            var expiresIn: Double
            var data: String
        }
        let body = try encode(Request(role: role.rawValue, expiresIn: seconds, data: ConnectionData.with(name: name, extra: data)))
        return try await call("POST", "/session/\(session.percentEncodedComponent)/token", json: body, as: MintedToken.self)
    }

    public func archives(session: String?) async throws(RelayAdminError) -> [Archive] {
        let query = session.map { "?sessionId=\($0.percentEncodedComponent)" } ?? ""
        return try await call("GET", "/archive" + query, as: Items<Archive>.self).items
    }

    public func startArchive(session: String, name: String?) async throws(RelayAdminError) -> Archive {
        struct Request: Encodable {
            var sessionId: String
            var name: String?
        }
        return try await call("POST", "/archive", json: try encode(Request(sessionId: session, name: name)), as: Archive.self)
    }

    public func stopArchive(_ id: String) async throws(RelayAdminError) -> Archive {
        try await call("POST", "/archive/\(id.percentEncodedComponent)/stop", as: Archive.self)
    }

    public func deleteArchive(_ id: String) async throws(RelayAdminError) {
        _ = try await send("DELETE", "/archive/\(id.percentEncodedComponent)")
    }

    /// Writes one stream of an archive (a WebM) to `path`, through `path.part` renamed when complete; returns its
    /// size in bytes.
    public func downloadArchive(_ id: String, stream: Int, to path: String) async throws(RelayAdminError) -> Int {
        let partial = path + ".part"
        guard FileManager.default.createFile(atPath: partial, contents: nil), let file = FileHandle(forWritingAtPath: partial) else {
            throw RelayAdminError("cannot write \(path): \(String(cString: strerror(errno)))")
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
            throw RelayAdminError(Self.explain(error, server: server))
        }
        guard (200..<300).contains(response.status) else {
            try? FileManager.default.removeItem(atPath: partial)
            throw RelayAdminError(Self.refusal(response))
        }
        do {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch {
            throw RelayAdminError("cannot write \(path): \(error.localizedDescription)")
        }
        return ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    // MARK: Plumbing

    private struct Items<Item: Decodable>: Decodable { var items: [Item] }

    private func call<Answer: Decodable>(_ method: String, _ path: String, json: Data? = nil, as type: Answer.Type) async throws(RelayAdminError)
        -> Answer
    {
        let response = try await send(method, path, json: json)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: response.body)
        } catch {
            throw RelayAdminError("the server at \(server) answered \(method) \(path) with something that is not a screenrelay's answer: is --server a screenrelay?")
        }
    }

    private func send(_ method: String, _ path: String, json: Data? = nil) async throws(RelayAdminError) -> RelayHTTPClient.Response {
        let response: RelayHTTPClient.Response
        do {
            response = try await http.send(method, server + path, bearer: secret, json: json)
        } catch {
            throw RelayAdminError(Self.explain(error, server: server))
        }
        guard (200..<300).contains(response.status) else { throw RelayAdminError(Self.refusal(response)) }
        return response
    }

    private func encode(_ value: some Encodable) throws(RelayAdminError) -> Data {
        do { return try JSONEncoder().encode(value) } catch { throw RelayAdminError("cannot encode the request: \(error)") }
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

/// Why an admin command failed, in a sentence.
public struct RelayAdminError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
