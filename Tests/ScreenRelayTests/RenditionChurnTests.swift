import Foundation
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransportClient
import ScreenWire
import Testing

/// A client with a viewer token that joins as a viewer decoding H.264 alone and leaves, again and again (and one with
/// no token that tries the same), beside an honest viewer of the AV1 stream: the publisher is asked for the
/// rendition at most once every 5 s and runs one second encoder, and the honest viewer's frames keep coming.
@Suite(.watchdog()) struct RenditionChurnTests {
    @Test func churningRenditionViewersCostTheHonestViewerNothing() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painting = HLSTests.paintStripes(try XPainter(displayName: display.name))
        defer { painting.cancel() }
        let publisher = try ChildProcess(ChildProcess.productsDirectory + "/screenpub", [
            "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--control-socket", "",
        ])
        defer { publisher.endInBackground(signal: SIGTERM) }
        try await relay.waitForConnections(1, timeout: .seconds(60))
        #expect(try await eventually(30) { publisher.errorsSoFar.contains("capturing the screen") })

        let churnSeconds = 15.0
        let honest = try ChildProcess(
            ChildProcess.productsDirectory + "/screensub",
            ["--server", relay.base, "--token", token, "--print-metadata", "--json", "--no-decode"])
        defer { honest.endInBackground(signal: SIGKILL) }

        // Joins and leaves as fast as the relay answers, for churnSeconds; without a token, refused each time.
        let deadline = Date().addingTimeInterval(churnSeconds)
        var joins = 0
        var refusedWithoutToken = 0
        // Each join within 20 s, or it is named here (a test that must not hang says what got stuck).
        var stuck: [String] = []
        while Date() < deadline, stuck.isEmpty {
            let joined: Void?? = await within(20) {
                try? await RelayClient.connect(transport: TransportKind.webSocket.to(relay), token: token, logger: quietLogger) { link, events in
                    // The share's stream, in the welcome or, when the publisher's `publish` is still on its way on a
                    // busy machine, as it is created.
                    for try await event in events {
                        var streamId: UInt32?
                        if case .control(.welcome(_, _, _, let streams, _, _)) = event { streamId = streams.first?.streamId }
                        if case .control(.streamCreated(let stream)) = event { streamId = stream.streamId }
                        if let streamId {
                            try await link.send(.subscribe(streamId: streamId, decodes: ["avc1.42"]))
                            return
                        }
                    }
                }
            }
            if joined == nil { stuck.append("join \(joins + 1) with the token") }
            joins += 1
            let welcomed = await within(20) {
                try? await RelayClient.connect(transport: TransportKind.webSocket.to(relay), token: "", logger: quietLogger) { link, events in
                    try? await link.send(.subscribe(streamId: 1, decodes: ["avc1.42"]))
                    for try await event in events {
                        if case .control(.welcome) = event { return true }
                    }
                    return false
                }
            }
            if welcomed == nil { stuck.append("join \(joins) without a token") }
            if welcomed != .some(.some(true)) { refusedWithoutToken += 1 }
        }
        #expect(stuck.isEmpty, "no answer within 20 s: \(stuck)")
        #expect(joins > 20 && refusedWithoutToken == joins, "\(joins) joins, \(refusedWithoutToken) refused without a token")

        let metrics = String(decoding: try await RelayHTTPClient().send("GET", "\(relay.base)/metrics").body, as: UTF8.self)
        let asked = metrics.split(separator: "\n").first { $0.hasPrefix("screenrelay_renditions_asked_total ") }.flatMap { Int($0.split(separator: " ")[1]) }
        #expect((asked ?? 99) <= Int(churnSeconds / 5) + 2, "\(String(describing: asked)) renditions asked in \(churnSeconds) s")
        let starts = publisher.errorsSoFar.components(separatedBy: "publishing the h264 rendition").count - 1
        #expect((1...2).contains(starts), "\(publisher.errorsSoFar.suffix(2000))")

        // The honest viewer: frames all along (about 5 a second while the stripes move), none held back: each
        // within 2 s of its capture. (Not the gaps between arrivals, printed: they count the publisher's own stalls
        // on the same two cores too, with every test at once; a relay holds back nothing it never got.)
        honest.signal(SIGTERM)
        let watched = await honest.wait(timeout: 20)
        let frames = watched.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["kind"] as? String == "video" }
        let received = frames.compactMap { ($0["receivedAtMilliseconds"] as? NSNumber)?.doubleValue }
        let latencies = frames.compactMap { ($0["latencyMilliseconds"] as? NSNumber)?.doubleValue }
        let gaps = zip(received.dropFirst(), received).map { $0 - $1 }
        #expect(
            received.count >= 40 && !latencies.isEmpty && (latencies.max() ?? .infinity) < 2_000,
            "\(received.count) frames; latencies \(latencies.sorted().suffix(5)) ms; gaps between arrivals \(gaps.sorted().suffix(5)) ms\n\(watched.standardError.suffix(800))")
    }
}
