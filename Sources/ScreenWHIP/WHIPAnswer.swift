import Foundation
import ScreenTransportClient
import ScreenWire

/// A WHIP endpoint's answer to the offer (`201 Created`): its SDP, the session's resource and the ICE servers it
/// names. ``reading(_:postedTo:)`` says what an HTTP answer to the `POST` means. Pure.
struct WHIPAnswer: Sendable, Equatable {
    var sdp: String
    /// The session's resource as an absolute URL, `DELETE`d at the end (nil: the endpoint gave no `Location`).
    var resource: String?
    /// ICE servers of its `Link: <…>; rel="ice-server"` headers, as webrtcbin takes them.
    var iceServers: [String]

    /// What an answer to the offer's `POST` means.
    enum Reading: Sendable, Equatable {
        case answered(WHIPAnswer)
        /// Post the offer again to this absolute URL (301, 302, 303, 307, 308).
        case redirected(to: String)
    }

    /// What `response`, the answer to the offer posted to `url`, means; throws a refusal (a wrong token, an
    /// unexpected status, a redirect to nowhere) in words the user can act on.
    static func reading(_ response: RelayHTTPClient.Response, postedTo url: String) throws(WHIPError) -> Reading {
        func absolute(_ location: String?) -> String? {
            location.flatMap { URL(string: $0, relativeTo: URL(string: url))?.absoluteString }
        }
        switch response.status {
        case 201:
            return .answered(WHIPAnswer(
                sdp: String(decoding: response.body, as: UTF8.self), resource: absolute(response.header("Location")),
                iceServers: response.headers("Link").flatMap(WHIPLink.iceServers(in:))))
        case 301, 302, 303, 307, 308:
            guard let next = absolute(response.header("Location")) else {
                throw WHIPError(.unreachable, "the WHIP endpoint at \(url) redirected (HTTP \(response.status)) without a Location")
            }
            return .redirected(to: next)
        case 401, 403:
            throw WHIPError(
                .refusedToken,
                "the WHIP endpoint at \(url) refused the token (HTTP \(response.status)): give the one the SFU expects with --whip-token")
        default:
            let said = String(decoding: response.body.prefix(200), as: UTF8.self).escapingControlCharacters
            throw WHIPError(.unreachable, "the WHIP endpoint at \(url) answered HTTP \(response.status)\(said.isEmpty ? "" : ": \(said)")")
        }
    }

    /// The media kinds (`video`, `audio`, `application`) an answer accepts: its m-lines whose port is not 0.
    static func acceptedMedia(in sdp: String) -> Set<String> {
        var kinds: Set<String> = []
        for line in sdp.split(whereSeparator: \.isNewline) where line.hasPrefix("m=") {
            let fields = line.dropFirst(2).split(separator: " ")
            if fields.count > 1, fields[1] != "0" { kinds.insert(String(fields[0])) }
        }
        return kinds
    }
}
