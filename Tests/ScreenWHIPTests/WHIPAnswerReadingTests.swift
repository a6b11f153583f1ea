import Foundation
@testable import ScreenTransportClient
import Testing

@testable import ScreenWHIP

/// What an HTTP answer to the offer's `POST` means, without a network: made-up answers.
struct WHIPAnswerReadingTests {
    static func response(_ status: Int, body: String = "", headers: [(name: String, value: String)] = []) -> RelayHTTPClient.Response {
        RelayHTTPClient.Response(status: status, body: Data(body.utf8), headers: headers)
    }

    @Test func aCreatedAnswerCarriesItsSDPAnAbsoluteResourceAndItsICEServers() throws {
        let response = Self.response(
            201, body: "v=0\r\n",
            headers: [
                ("Location", "/whip/resource/7"), ("link", #"<stun:stun.example.net:3478>; rel="ice-server""#),
                ("Link", #"<turn:turn.example.net>; rel="ice-server"; username="u"; credential="c""#),
            ])
        let reading = try WHIPAnswer.reading(response, postedTo: "https://sfu.example.net:8443/whip/endpoint")
        #expect(reading == .answered(WHIPAnswer(
            sdp: "v=0\r\n", resource: "https://sfu.example.net:8443/whip/resource/7",
            iceServers: ["stun://stun.example.net:3478", "turn://u:c@turn.example.net"])))
    }

    @Test func anAnswerWithoutLocationHasNoResource() throws {
        let reading = try WHIPAnswer.reading(Self.response(201, body: "v=0"), postedTo: "https://sfu/whip")
        #expect(reading == .answered(WHIPAnswer(sdp: "v=0", resource: nil, iceServers: [])))
    }

    @Test func redirectsAreFollowedToAnAbsoluteURL() throws {
        for status in [301, 302, 303, 307, 308] {
            let reading = try WHIPAnswer.reading(Self.response(status, headers: [("Location", "other?room=1")]), postedTo: "https://sfu/whip/endpoint")
            #expect(reading == .redirected(to: "https://sfu/whip/other?room=1"))
        }
        #expect {
            try WHIPAnswer.reading(Self.response(307), postedTo: "https://sfu/whip")
        } throws: { error in
            (error as? WHIPError)?.kind == .unreachable && "\(error)".contains("redirected (HTTP 307) without a Location")
        }
    }

    @Test func aRefusedTokenIsPermanentAndSaysWhatToGive() {
        for status in [401, 403] {
            #expect {
                try WHIPAnswer.reading(Self.response(status), postedTo: "https://sfu/whip")
            } throws: { error in
                guard let error = error as? WHIPError else { return false }
                return error.kind == .refusedToken && error.kind.isPermanent && error.message.contains("--whip-token")
            }
        }
    }

    /// Any other status is a failure worth retrying, with the start of what the endpoint said (control
    /// characters escaped).
    @Test func anotherStatusIsRetriedAndQuotesTheEndpoint() {
        #expect {
            try WHIPAnswer.reading(Self.response(503, body: "busy\u{1b}[31m" + String(repeating: "x", count: 300)), postedTo: "https://sfu/whip")
        } throws: { error in
            guard let error = error as? WHIPError else { return false }
            return error.kind == .unreachable && !error.kind.isPermanent
                && error.message.hasPrefix("the WHIP endpoint at https://sfu/whip answered HTTP 503: busy") && !error.message.contains("\u{1b}")
                && error.message.count < 300
        }
        #expect {
            try WHIPAnswer.reading(Self.response(500), postedTo: "https://sfu/whip")
        } throws: { error in
            "\(error)".hasSuffix("answered HTTP 500")
        }
    }
}
