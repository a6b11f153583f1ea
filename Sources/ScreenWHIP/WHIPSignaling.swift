import CWHIPShims
import Foundation
import Logging
import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Synchronization

/// WHIP's HTTP side: the offer posted and its answer checked, ICE servers from the endpoint's `Link` headers.
extension WHIPPublisher {
    /// `POST`s the offer; follows up to 3 redirects (307/308 keep the method). Returns the answer and the
    /// resource URL (absolute).
    func post(_ offer: String) async throws -> (sdp: String, resource: String?, iceServers: [String]) {
        var url = endpoint
        for _ in 0..<4 {
            let response: RelayHTTPClient.Response
            do {
                response = try await http.send("POST", url, bearer: token, body: (Data(offer.utf8), "application/sdp"))
            } catch {
                throw WHIPError(.unreachable, error.message)
            }
            switch response.status {
            case 201:
                let sdp = String(decoding: response.body, as: UTF8.self)
                let resource = response.header("Location").flatMap { URL(string: $0, relativeTo: URL(string: url))?.absoluteString }
                if resource == nil { logger.warning("the WHIP endpoint at \(url) gave no Location: the session cannot be ended with DELETE") }
                return (sdp, resource, response.headers("Link").flatMap(WHIPLink.iceServers(in:)))
            case 301, 302, 303, 307, 308:
                guard let location = response.header("Location"), let next = URL(string: location, relativeTo: URL(string: url))?.absoluteString else {
                    throw WHIPError(.unreachable, "the WHIP endpoint at \(url) redirected (HTTP \(response.status)) without a Location")
                }
                url = next
            case 401, 403:
                throw WHIPError(
                    .refusedToken,
                    "the WHIP endpoint at \(url) refused the token (HTTP \(response.status)): give the one the SFU expects with --whip-token")
            default:
                let said = String(decoding: response.body.prefix(200), as: UTF8.self).escapingControlCharacters
                throw WHIPError(.unreachable, "the WHIP endpoint at \(url) answered HTTP \(response.status)\(said.isEmpty ? "" : ": \(said)")")
            }
        }
        throw WHIPError(.unreachable, "the WHIP endpoint at \(endpoint) redirected more than 3 times")
    }

    /// ICE servers the endpoint names in `Link: <…>; rel="ice-server"` headers of an `OPTIONS` answer (before the
    /// offer, as WHIP's drafts had it), as webrtcbin's `stun://host:port` / `turn://user:password@host:port`.
    func iceServersFromOptions() async -> [String] {
        guard let response = try? await http.send("OPTIONS", endpoint, bearer: token, body: nil), (200..<300).contains(response.status) else {
            return []
        }
        return response.headers("Link").flatMap(WHIPLink.iceServers(in:))
    }

    /// Fails unless the answer accepts video in `codec`: an SFU that does not take the codec still answers
    /// 201, with the m-line refused (port 0) or without the codec.
    static func checkAnswer(_ sdp: String, codec: VideoCodec, endpoint: String) throws {
        let name = codec == .vp8 ? "VP8" : "VP9"
        var inVideo = false, accepted = false, hasCodec = false
        for line in sdp.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("m=") {
                let fields = line.dropFirst(2).split(separator: " ")
                inVideo = fields.first == "video"
                if inVideo { accepted = fields.count > 1 && fields[1] != "0" }
            } else if inVideo, line.hasPrefix("a=rtpmap:"), line.uppercased().contains(" \(name)/90000") {
                hasCodec = true
            }
        }
        guard accepted, hasCodec else {
            throw WHIPError(
                .unusableAnswer,
                "the WHIP endpoint at \(endpoint) answered without \(name) video: the SFU does not take \(name) there (configure it for \(name), or try --codec \(codec == .vp8 ? "vp9" : "vp8"))")
        }
    }
}

/// `Link` header values of kind `rel="ice-server"` (RFC 9725 §4.6), as webrtcbin takes ICE servers.
enum WHIPLink {
    /// A server for the log: its credentials left out.
    static func redacted(_ server: String) -> String {
        guard let at = server.lastIndex(of: "@"), let scheme = server.range(of: "://") else { return server }
        return String(server[..<scheme.upperBound]) + "…@" + String(server[server.index(after: at)...])
    }

    static func iceServers(in header: String) -> [String] {
        header.split(separator: ",").compactMap { entry -> String? in
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = parts.first, target.hasPrefix("<"), target.hasSuffix(">") else { return nil }
            var parameters: [String: String] = [:]
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                parameters[pair[0].lowercased()] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard parameters["rel"] == "ice-server" else { return nil }
            let uri = String(target.dropFirst().dropLast())
            let address = uri.split(separator: ":", maxSplits: 1).last.map { String($0.split(separator: "?").first ?? "") } ?? ""
            if uri.hasPrefix("stun:") { return "stun://\(address)" }
            if uri.hasPrefix("turn:") || uri.hasPrefix("turns:") {
                let scheme = uri.hasPrefix("turns:") ? "turns" : "turn"
                let user = parameters["username"]?.percentEncodedComponent ?? ""
                let password = parameters["credential"]?.percentEncodedComponent ?? ""
                return "\(scheme)://\(user):\(password)@\(address)"
            }
            return nil
        }
    }
}

