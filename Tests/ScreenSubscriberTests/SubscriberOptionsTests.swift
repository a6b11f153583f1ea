import ArgumentParser
import Foundation
import ScreenService
import ScreenSubscriber
import Testing

/// screensub's options without a relay: which combinations are refused, in which sentence, and which job the
/// others ask for.
struct SubscriberOptionsTests {
    static func refusal(_ arguments: [String]) -> String {
        do {
            try SubscriberOptions.parse(arguments).check()
            return ""
        } catch {
            return SubscriberOptions.message(for: error)
        }
    }

    @Test func combinationsThatDoNotGoTogetherAreRefused() {
        #expect(Self.refusal([]) == "give one of --input FILE, --server URL or --hls URL")
        #expect(Self.refusal(["--input", "a.webm", "--hls", "http://h"]) == "give one of --input FILE, --server URL or --hls URL")
        #expect(Self.refusal(["--input", "a.webm", "--count", "3"]) == "--output, --count and --stream go with --server")
        #expect(Self.refusal(["--input", "a.webm", "--token", "t"]) == "--token and --token-file go with --server")
        #expect(Self.refusal(["--input", "a.webm", "--frames", "d", "--no-decode"]) == "--frames needs decoding; drop --no-decode")
        #expect(Self.refusal(["--input", "a.webm", "--segments", "2"]) == "--segments goes with --hls")
        #expect(Self.refusal(["--hls", "http://h", "--segments", "0"]) == "--segments must be positive")
        #expect(Self.refusal(["--hls", "http://h", "--chat"]).hasPrefix("--hls reads timed metadata: "))
        #expect(Self.refusal(["--server", "http://r", "--token", "t", "--count", "0"]) == "--count must be positive")
        #expect(Self.refusal(["--input", "a.webm", "--to", "c1"]) == "--to goes with --chat")
        #expect(Self.refusal(["--input", "a.webm", "--ca-file", "ca.pem"]) == "--ca-file goes with --server or --hls")
        #expect(Self.refusal(["--input", "a.webm"]) == "")
    }

    @Test func eachModeIsItsJob() throws {
        guard case .recording(let dump)? = try SubscriberOptions.parse(["--input", "a.webm", "--no-decode", "--json"]).job else {
            Issue.record("--input reads a recording")
            return
        }
        #expect(dump.path == "a.webm" && !dump.decodes && dump.json && !dump.printsMetadata)
        guard case .live(let live)? = try SubscriberOptions.parse(["--server", "http://r", "--token", "t", "--count", "4", "--stream", "2"]).job
        else {
            Issue.record("--server subscribes")
            return
        }
        #expect(live.server == "http://r" && live.token == "t" && live.frameLimit == 4 && live.stream == 2 && live.decodes)
        guard case .chat(let chat)? = try SubscriberOptions.parse(["--server", "http://r", "--token", "t", "--chat", "--to", "c1"]).job else {
            Issue.record("--chat chats")
            return
        }
        #expect(chat.to == "c1" && chat.token == "t")
        guard case .hls(let follow)? = try SubscriberOptions.parse(["--hls", "http://h/index.m3u8", "--segments", "3", "--print-metadata"]).job
        else {
            Issue.record("--hls follows HLS")
            return
        }
        #expect(follow.url == "http://h/index.m3u8" && follow.segments == 3 && follow.printsFrames)
    }
}
