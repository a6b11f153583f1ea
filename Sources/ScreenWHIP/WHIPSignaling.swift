import Foundation
import Logging
import ScreenMedia
import ScreenTransport
import ScreenTransportClient

/// WHIP's HTTP side: the offer posted and its answer checked, ICE servers from the endpoint's `Link` headers.
extension WHIPPublisher {
    /// `POST`s the offer; follows up to 3 redirects (307/308 keep the method). Returns the answer, its resource
    /// URL absolute.
    func post(_ offer: String) async throws -> WHIPAnswer {
        var url = endpoint
        for _ in 0..<4 {
            let response: RelayHTTPClient.Response
            do {
                response = try await http.send("POST", url, bearer: token, body: (Data(offer.utf8), "application/sdp"))
            } catch {
                throw WHIPError(.unreachable, error.message)
            }
            switch try WHIPAnswer.reading(response, postedTo: url) {
            case .answered(let answer):
                if answer.resource == nil { logger.warning("the WHIP endpoint at \(url) gave no Location: the session cannot be ended with DELETE") }
                return answer
            case .redirected(let next):
                url = next
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
        let name = switch codec {
        case .vp8: "VP8"
        case .h264: "H264"
        case .vp9, .av1: "VP9"
        }
        let other = codec == .vp8 ? "vp9 or h264" : codec == .h264 ? "vp9 or vp8" : "vp8 or h264"
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
                "the WHIP endpoint at \(endpoint) answered without \(name) video: the SFU does not take \(name) there (configure it for \(name), or try --codec \(other))")
        }
    }
}
