import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenTransportClient
import Testing

/// LL-HLS from a real relay fed by a real screenpub on a private Xvfb, read as an LL-HLS player reads it: parts
/// that need no keyframe, blocking reloads answered when the next part is out, a hinted part served as soon as it
/// is, parts that keep coming from an idle screen, and a WebSocket viewer of the same stream that gets one
/// keyframe a segment at most.
@Suite(.watchdog()) struct HLSLowLatencyLiveTests {
    @Test
    func partsFollowEachOtherWithoutKeyframesAndBlockingReloadsWaitForThem() async throws {
        let relay = try await RunningRelay { $0.hlsSegmentSeconds = 2 }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let publisher = try ChildProcess(ChildProcess.productsDirectory + "/screenpub", [
            "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--control-socket", "", "--verbose",
        ])
        defer { publisher.endInBackground(signal: SIGTERM) }
        let painting = HLSTests.paintStripes(painter)
        defer { painting.cancel() }
        // A live viewer of the same stream over the WebSocket, counting the keyframes it gets.
        let watchingSince = ContinuousClock.now
        let watcher = try ChildProcess(
            ChildProcess.productsDirectory + "/screensub", ["--server", relay.base, "--token", viewerToken, "--print-metadata", "--json", "--no-decode"])
        defer { watcher.endInBackground(signal: SIGKILL) }

        let base = "\(relay.base)/hls/\(session.sessionId)"
        let http = RelayHTTPClient()
        let first = try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)")
        let text = String(decoding: first.body, as: UTF8.self)
        #expect(first.status == 200 && text.contains("#EXT-X-PART-INF:PART-TARGET=0.500") && text.contains("CAN-BLOCK-RELOAD=YES"), "\(text)")
        #expect(text.contains("#EXT-X-PART:DURATION=") && text.contains("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-"), "\(text)")

        // A player at the live edge: each blocking reload names the part after the newest it holds, and is answered
        // when that part is out — about a part's length later, not a segment's.
        var playlist = try #require(HLSPlaylistParser.media(text))
        var cursor = HLSPlaylistCursor.start(playlist).fetches(in: playlist).next
        var waits: [Double] = []
        for _ in 0..<8 {
            let asked = ContinuousClock.now
            let answer = try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)&\(cursor.blockingQuery)")
            waits.append((ContinuousClock.now - asked) / .seconds(1))
            #expect(answer.status == 200)
            playlist = try #require(HLSPlaylistParser.media(String(decoding: answer.body, as: UTF8.self)))
            let (fetches, next) = cursor.fetches(in: playlist)
            #expect(!fetches.isEmpty, "the answer holds what was asked for: \(cursor)")
            for fetch in fetches {
                let part = try await http.send("GET", "\(base)/\(fetch.uri)")
                #expect(part.status == 200 && part.body.count > 8 && String(decoding: part.body[4..<8], as: UTF8.self) == "emsg")
            }
            cursor = next
        }
        // A part or two, not a segment (2 s here); a machine busy with other work may hold one or two answers longer.
        #expect(waits.filter { $0 < 1.5 }.count >= 6 && waits.max() ?? 9 < 3, "each next part came within a part or two: \(waits)")

        // The hinted part, asked for before it exists, is answered as soon as it is out.
        let latest = String(decoding: (try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)")).body, as: UTF8.self)
        let hint = try #require(latest.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT:") })
        let hinted = try #require(HLSPlaylistParser.attributes(String(hint.dropFirst("#EXT-X-PRELOAD-HINT:".count)))["URI"])
        let hintedPart = try await http.send("GET", "\(base)/\(hinted)")
        #expect(hintedPart.status == 200 || hintedPart.status == 404, "a hint the segment's end overtook is 404: \(hintedPart.status)")

        // What no playlist could reach soon is refused at once, with the reason; so is a bad number.
        let farAhead = try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)&_HLS_msn=\(cursor.sequence + 5)&_HLS_part=0")
        #expect(farAhead.status == 400 && String(decoding: farAhead.body, as: UTF8.self).contains("more than two past the live one"))
        let bad = try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)&_HLS_msn=-3")
        #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).contains("_HLS_msn must be a whole number"))
        #expect(try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)&_HLS_skip=YES").status == 200)

        // The screen stands still: the publisher sends nothing of its own, yet parts keep coming (the relay asks it
        // for a refresh, a few bytes), so a player never stalls.
        painting.cancel()
        try await Task.sleep(for: .seconds(1.5))
        let before = try #require(HLSPlaylistParser.media(String(decoding: (try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)")).body, as: UTF8.self)))
        try await Task.sleep(for: .seconds(4))
        let after = try #require(HLSPlaylistParser.media(String(decoding: (try await http.send("GET", "\(base)/stream.m3u8?token=\(viewerToken)")).body, as: UTF8.self)))
        let partsBefore = Set(before.segments.flatMap(\.parts).map(\.uri))
        let newParts = after.segments.flatMap(\.parts).filter { !partsBefore.contains($0.uri) }
        // Refresh requests back off to 2 s when unanswered: a loaded machine may answer some late.
        let durations = newParts.map(\.duration).sorted()
        // (On failure, what screenpub said of its uplink and of holding frames back, in its last seconds.)
        let said = publisher.errorsSoFar.split(separator: "\n").suffix(60).joined(separator: "\n")
        #expect(newParts.count >= 4, "parts every ~0.5 s on a still screen: \(durations)\n\(said)")
        #expect(durations.isEmpty || (durations[durations.count / 2] <= 1.0 && durations.last! <= 2.0), "\(durations)\n\(said)")

        // The WebSocket viewer got one keyframe a 2 s segment at most, besides the one it joined with, the one
        // HLS started with and one for the two 1 s segments HLS starts with, however long HLS ran.
        let seconds = (ContinuousClock.now - watchingSince) / .seconds(1)
        let keyframes = watcher.outputSoFar.split(separator: "\n").filter { $0.contains("\"kind\":\"video\"") && $0.contains("\"keyframe\":true") }.count
        #expect(keyframes >= 2 && Double(keyframes) <= seconds / 2 + 3, "\(keyframes) keyframes in \(seconds) s")
        let refreshes = watcher.outputSoFar.split(separator: "\n").filter { $0.contains("\"kind\":\"video\"") }.count
        #expect(Double(refreshes) < seconds * 5 + 5, "no more frames than the capture rate: \(refreshes) in \(seconds) s")
    }
}
