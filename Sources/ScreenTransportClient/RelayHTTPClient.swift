public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import ScreenMedia
public import ScreenTransport

/// One HTTP request to a relay's API (`http://` or `https://`, verified with ``ClientTrust``), on a connection
/// of its own, with a deadline. The relay's answers are small: a body past 1 MiB is refused.
public struct RelayHTTPClient: Sendable {
    public let trust: ClientTrust
    /// Seconds the whole exchange may take, connecting included.
    public var timeoutSeconds: Double = 30

    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        /// The answer's header fields, in order.
        public var headers: [(name: String, value: String)] = []

        /// The first value of header `name` (compared ignoring case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// Every value of header `name`.
        public func headers(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
    }

    /// The largest answer read (the API's are small JSON; media segments are larger).
    public var maximumBody = 1 << 20

    /// What the server is, as messages name it ("cannot reach the relay at …"): the relay, a WHIP endpoint, an
    /// HLS origin.
    public let peer: String

    public init(trust: ClientTrust = .system, peer: String = "the relay") {
        self.trust = trust
        self.peer = peer
    }

    /// Sends `method url` with `Authorization: Bearer bearer`, a JSON body and any further `headers`, and returns
    /// the answer, whatever its status. Throws ``RelayClientError`` (`.unreachable`) when there is no answer.
    public func send(
        _ method: String, _ url: String, bearer: String? = nil, json: Data? = nil, headers: [(name: String, value: String)] = []
    ) async throws(RelayClientError) -> Response {
        try await send(method, url, bearer: bearer, body: json.map { ($0, "application/json") }, headers: headers)
    }

    /// `GET url` whose successful (2xx) answer is written to `file` as it arrives, whatever its size; any other
    /// answer is returned in the response's body as ``send(_:_:bearer:json:headers:)`` would. ``timeoutSeconds``
    /// bounds the whole download.
    public func download(_ url: String, bearer: String? = nil, to file: FileHandle) async throws(RelayClientError) -> Response {
        try await send("GET", url, bearer: bearer, body: nil, saving: file)
    }

    /// ``send(_:_:bearer:json:headers:)`` with a body of any type (a media segment to an origin).
    public func send(
        _ method: String, _ url: String, bearer: String? = nil, body: (data: Data, contentType: String)?,
        headers: [(name: String, value: String)] = []
    ) async throws(RelayClientError) -> Response {
        try await send(method, url, bearer: bearer, body: body, headers: headers, saving: nil)
    }

    private func send(
        _ method: String, _ url: String, bearer: String?, body: (data: Data, contentType: String)?,
        headers: [(name: String, value: String)] = [], saving file: FileHandle?
    ) async throws(RelayClientError) -> Response {
        let json = body?.data
        guard let address = RelayAddress(url, plain: "http", secure: "https") else {
            throw RelayClientError(.unreachable, "\(url) is not an http:// or https:// URL")
        }
        let tlsContext: NIOSSLContext?
        if address.secure {
            do {
                tlsContext = try NIOSSLContext(configuration: trust.tlsConfiguration())
            } catch let error as RelayClientError {
                throw error
            } catch {
                throw RelayClientError(.unreachable, "cannot set up TLS: \(error)")
            }
        } else {
            tlsContext = nil
        }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: address.target)
        head.headers.add(name: "Host", value: address.hostHeader)
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "User-Agent", value: "screenpub")
        if let bearer { head.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for header in headers { head.headers.add(name: header.name, value: header.value) }
        if let body {
            head.headers.add(name: "Content-Type", value: body.contentType)
            head.headers.add(name: "Content-Length", value: String(body.data.count))
        } else if method != "GET" {
            head.headers.add(name: "Content-Length", value: "0")
        }
        let request = head
        do {
            return try await withThrowingTaskGroup(of: Response.self) { group in
                group.addTask { [maximumBody] in
                    try await Self.exchange(
                        address, tls: tlsContext, head: request, body: json, maximumBody: maximumBody, saving: file)
                }
                group.addTask { [timeoutSeconds] in
                    try await Task.sleep(for: .milliseconds(Int(timeoutSeconds * 1000)))
                    throw RelayClientError(.unreachable, "no answer within \(Int(timeoutSeconds)) s")
                }
                defer { group.cancelAll() }
                guard let response = try await group.next() else { throw CancellationError() }
                return response
            }
        } catch let error as RelayClientError {
            throw RelayClientError(.unreachable, "cannot reach \(peer) at \(url): \(error.message)")
        } catch {
            throw RelayClientError(.unreachable, "cannot reach \(peer) at \(url): \(trust.explain(error, url: url))")
        }
    }

    private static func exchange(
        _ address: RelayAddress, tls: NIOSSLContext?, head: HTTPRequestHead, body: Data?, maximumBody: Int, saving file: FileHandle?
    ) async throws -> Response {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: address.host, port: address.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        // A name is checked against the certificate (and sent as SNI); an address is checked as an address.
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: address.isAddress ? nil : address.host))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            // A server may answer before it has read the whole request (a refusal) and close, and then the rest
            // of the request meets a reset: the answer that came first is still the answer. Likewise a failed
            // TLS handshake closes the channel under the writes, and its reason arrives inbound.
            var writeFailure: (any Error)?
            do {
                try await outbound.write(.head(head))
                if let body { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                try await outbound.write(.end(nil))
            } catch {
                writeFailure = error
            }
            var status = 0
            var headers: [(name: String, value: String)] = []
            var received = ByteBuffer()
            do {
                for try await part in inbound {
                    switch part {
                    case .head(let responseHead):
                        status = Int(responseHead.status.code)
                        headers = responseHead.headers.map { ($0.name, $0.value) }
                    case .body(var chunk):
                        if let file, (200..<300).contains(status) {
                            try chunk.withUnsafeReadableBytes { try file.write(contentsOf: $0) }
                            continue
                        }
                        guard received.readableBytes + chunk.readableBytes <= maximumBody else {
                            throw RelayClientError(.unreachable, "its answer is larger than \(maximumBody) bytes")
                        }
                        received.writeBuffer(&chunk)
                    case .end:
                        return Response(status: status, body: Data(received.readableBytesView), headers: headers)
                    }
                }
            }
            throw writeFailure ?? RelayClientError(.unreachable, "the connection closed before the answer was complete")
        }
    }
}

extension RelayHTTPClient: HTTPUploader {
    public func upload(_ method: String, _ url: String, body: (data: Data, contentType: String)?) async throws(RelayClientError) -> Int {
        try await send(method, url, body: body).status
    }
}
