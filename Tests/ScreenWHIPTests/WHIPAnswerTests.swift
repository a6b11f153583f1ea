import Testing

@testable import ScreenWHIP

/// What screenpub reads from a WHIP endpoint's answers: the ICE servers of `Link` headers, and whether an
/// answer takes our video.
struct WHIPAnswerTests {
    @Test func iceServersComeFromLinkHeadersInWebrtcbinsForm() {
        let header = #"<stun:stun.example.net:3478>; rel="ice-server", <turn:turn.example.net:3478?transport=udp>; rel="ice-server"; username="ada"; credential="p@ss word"; credential-type="password", <https://example.net/x>; rel="other""#
        #expect(WHIPLink.iceServers(in: header) == ["stun://stun.example.net:3478", "turn://ada:p%40ss%20word@turn.example.net:3478"])
        #expect(WHIPLink.iceServers(in: "<turns:turn.example.net>; rel=\"ice-server\"; username=\"u\"; credential=\"c\"") == ["turns://u:c@turn.example.net"])
        #expect(WHIPLink.redacted("turn://ada:secret@turn.example.net:3478") == "turn://…@turn.example.net:3478")
    }

    @Test func anAnswerMustAcceptOurVideoCodec() throws {
        let accepted = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP9/90000\r\n"
        try WHIPPublisher.checkAnswer(accepted, codec: .vp9, endpoint: "https://sfu")
        // Refused m-line (port 0), or only another codec: a clear refusal naming what to do.
        for answer in ["v=0\r\nm=video 0 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP9/90000\r\n", "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 102\r\na=rtpmap:102 H264/90000\r\n", "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"] {
            #expect {
                try WHIPPublisher.checkAnswer(answer, codec: .vp9, endpoint: "https://sfu")
            } throws: { error in
                "\(error)".contains("answered without VP9 video") && "\(error)".contains("--codec vp8")
            }
        }
    }

    @Test func linkEntriesThatNameNoICEServerAreLeftOut() {
        // Another relation, no angle brackets, an unknown scheme, a parameter without a value.
        let header = #"<stun:a.example.net>; rel="other", stun:b.example.net; rel="ice-server", <https://c.example.net>; rel="ice-server", <stun:d.example.net:19302>; rel=ice-server; novalue"#
        #expect(WHIPLink.iceServers(in: header) == ["stun://d.example.net:19302"])
        #expect(WHIPLink.iceServers(in: "").isEmpty)
        // A TURN server without credentials is still named, with empty ones.
        #expect(WHIPLink.iceServers(in: #"<turn:t.example.net:3478>; rel="ice-server""#) == ["turn://:@t.example.net:3478"])
        // Nothing to hide: the server as it is.
        #expect(WHIPLink.redacted("stun://stun.example.net:3478") == "stun://stun.example.net:3478")
    }

    @Test func theVideoSectionIsFoundAmongOthersAndItsCodecMatchedIgnoringCase() throws {
        let answer = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 vp8/90000\r\n"
        try WHIPPublisher.checkAnswer(answer, codec: .vp8, endpoint: "https://sfu")
        // VP8 named in the audio section only does not count, and the refusal suggests the other codec.
        let misplaced = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\nm=video 9 UDP/TLS/RTP/SAVPF 97\r\na=rtpmap:97 H264/90000\r\n"
        #expect {
            try WHIPPublisher.checkAnswer(misplaced, codec: .vp8, endpoint: "https://sfu")
        } throws: { error in
            "\(error)".contains("answered without VP8 video") && "\(error)".contains("--codec vp9")
        }
    }
}
