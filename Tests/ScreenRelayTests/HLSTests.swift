import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import Testing

/// Live HLS from a real relay fed by a real screenpub capturing a private Xvfb: read by ffmpeg/ffprobe from
/// the playlist URL, its timed metadata by mutagen, its times checked against the frames' capture times.
@Suite(.watchdog()) struct HLSTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"

    @Test
    func aSharedScreenBecomesLiveHLSWithItsMetadataAndCaptureTimes() async throws {
        let archives = FileManager.default.temporaryDirectory.appendingPathComponent("hls-archives-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: archives) }
        let relay = try await RunningRelay(dataDirectory: archives) { $0.hlsSegmentSeconds = 1 }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        // The default metadata: each frame's capture time (ISO-8601, ms), which the segments' dates must match.
        let controlSocket = FileManager.default.temporaryDirectory.appendingPathComponent("hls-\(UUID().uuidString.prefix(8)).sock").path
        let publisher = try ChildProcess(screenpub, [
            "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--keepalive", "1",
            "--control-socket", controlSocket,
        ])
        defer { publisher.endInBackground(signal: SIGTERM) }
        let painting = Self.paintStripes(painter)
        defer { painting.cancel() }

        let base = "\(relay.base)/hls/\(session.sessionId)"
        let http = RelayHTTPClient()
        /// The media playlist as the viewer's token gets it now ("" when there is no answer).
        @Sendable func mediaPlaylist() async -> String {
            String(decoding: (try? await http.send("GET", base + "/stream.m3u8?token=\(viewerToken)"))?.body ?? Data(), as: UTF8.self)
        }
        // No token, a token of another session: refused.
        #expect(try await http.send("GET", base + "/index.m3u8").status == 401)
        let other = try await relay.createSession()
        #expect(try await http.send("GET", base + "/index.m3u8?token=\(other.token)").status == 401)

        // The first request waits for the first segment.
        let index = try await http.send("GET", base + "/index.m3u8?token=\(viewerToken)")
        let multivariant = String(decoding: index.body, as: UTF8.self)
        #expect(index.status == 200, "\(multivariant)")
        #expect(multivariant.contains("CODECS=\"av01.0.") && multivariant.contains("RESOLUTION=320x240"), "\(multivariant)")  // AV1, from auto
        #expect(multivariant.contains("stream.m3u8?token=\(viewerToken)"), "the token is carried on: \(multivariant)")

        // A few segments into the stream, the media playlist lists them with their dates.
        var media = ""
        #expect(try await eventually(30) {
            media = await mediaPlaylist()
            return media.components(separatedBy: "#EXTINF:").count > 3
        }, "\(media)")
        #expect(media.contains("#EXT-X-TARGETDURATION:2") && media.contains("#EXT-X-MAP:URI=\"init-0.mp4?token="), "\(media)")
        // The closed segments (the one being written, listed by its parts, has a date but no URI yet).
        let closed = try #require(HLSPlaylistParser.media(media)).segments.filter { $0.uri != nil }
        let segmentURIs = closed.compactMap(\.uri)
        let dates = closed.compactMap(\.programDateTime)
        let durations = closed.compactMap(\.duration)
        #expect(dates.count == segmentURIs.count && durations.count == segmentURIs.count)
        // The timeline is continuous: each segment lasts until the next one's first frame was captured. (How
        // close they come to the 1 s target depends on how soon the publisher answers, on a busy machine.)
        #expect(durations.allSatisfy { $0 > 0 }, "\(durations)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let starts = dates.compactMap { formatter.date(from: $0)?.timeIntervalSince1970 }
        // Except after a publisher silent past a segment's bound (a starved process on a loaded machine): the
        // segment was cut there, at the target duration + 0.49 s, and the next starts at the next frame, later.
        for index in 0..<(starts.count - 1) {
            let gap = starts[index + 1] - starts[index] - durations[index]
            let cutAtItsBound = abs(durations[index] - 2.49) < 0.01 && gap > 0
            #expect(abs(gap) < 0.05 || cutAtItsBound, "\(dates) \(durations)")
        }

        // Each segment: the frames' ID3 metadata in emsg boxes; its first frame was captured at its date.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (uri, date) in zip(segmentURIs, dates).prefix(2) {
            let segment = try await http.send("GET", "\(base)/\(uri)")
            #expect(segment.status == 200)
            let path = "\(directory)/\(uri.prefix { $0 != "?" })"
            try segment.body.write(to: URL(fileURLWithPath: path))
            let read = try await ChildProcess.run("/usr/bin/python3", [TestFixtures.emsgReader, path])
            let events = read.standardOutput.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            // Every frame of the segment has its event; how many frames a segment holds is the publisher's pace
            // (a busy machine may send one before the next keyframe).
            #expect(!events.isEmpty && events.count == read.standardOutput.split(separator: "\n").count, "\(read.standardError)")
            let texts = events.compactMap { ($0["txxx"] as? [String: String])?[ID3MetadataTag.metadataDescription] }
            let captured = events.compactMap { ($0["txxx"] as? [String: String])?[ID3MetadataTag.captureTimeDescription] }
            #expect(texts == captured, "the default metadata is the capture time")
            #expect(captured.first == date, "the segment's date is its first frame's capture time: \(captured.prefix(1)) vs \(date)")
            #expect(captured == captured.sorted())
        }

        // screensub follows the stream from here on, as a player does (what it prints is checked below).
        let following = try ChildProcess(
            ChildProcess.productsDirectory + "/screensub", ["--hls", "\(base)/index.m3u8?token=\(viewerToken)", "--print-metadata", "--json"])
        defer { following.endInBackground(signal: SIGKILL) }

        // The presenter pauses and resumes: a date range that starts, then ends.
        #expect(try await ChildProcess.run(screenpub, ["pause", "--control-socket", controlSocket]).status == 0)
        #expect(try await eventually(30) {
            let text = await mediaPlaylist()
            return text.contains("#EXT-X-DATERANGE:ID=\"pause-1\",CLASS=\"com.screenpub.pause\",START-DATE=\"")
        })
        #expect(try await ChildProcess.run(screenpub, ["resume", "--control-socket", controlSocket]).status == 0)
        #expect(try await eventually(30) {
            media = await mediaPlaylist()
            return media.contains("CLASS=\"com.screenpub.pause\"") && media.contains("END-DATE=\"")
        }, "\(media)")

        // A posted marker (an ad break, with its SCTE-35 splice) joins the timeline; bad ones are refused with a reason.
        let marker = #"{"id":"break-1","duration":15,"attributes":{"X-TITLE":"Sponsor","SCTE35-OUT":"0xFC302000"}}"#
        let moderator = try await relay.token(session: session.sessionId, role: .moderator)
        #expect(try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", bearer: viewerToken, json: Data(marker.utf8)).status == 403)
        #expect(try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", json: Data(marker.utf8)).status == 401)
        let refused = try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", bearer: moderator, json: Data(#"{"class":"x"}"#.utf8))
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("is required: 1-64 letters"), "\(String(decoding: refused.body, as: UTF8.self))")
        for (bad, reason) in [
            (#"{"id":"x","attributes":{"SCTE35-OUT":"0xFC3"}}"#, "even number of hex digits"),
            (#"{"id":"x","attributes":{"X-PAD":""# + String(repeating: "a", count: 5000) + #""}}"#, "at most 4096 bytes"),
        ] {
            let answer = try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", bearer: moderator, json: Data(bad.utf8))
            #expect(answer.status == 400 && String(decoding: answer.body, as: UTF8.self).contains(reason), "\(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", bearer: moderator, json: Data(marker.utf8)).status == 204)
        #expect(try await eventually(30) {
            media = await mediaPlaylist()
            return media.contains(#"CLASS="com.screenpub.marker""#) && media.contains(#"DURATION=15.000,SCTE35-OUT=0xFC302000,X-TITLE="Sponsor""#)
        }, "\(media)")

        // A recording of the session: a date range from its start to its stop, with its name.
        let (started, startedBody) = try await relay.post("/archive", json: ["sessionId": session.sessionId, "name": "standup"])
        #expect(started == 200)
        let archiveId = try #require((try JSONSerialization.jsonObject(with: startedBody) as? [String: Any])?["id"] as? String)
        #expect(try await eventually(30) {
            media = await mediaPlaylist()
            return media.contains(#"ID="archive-\#(archiveId)",CLASS="com.screenpub.archive""#) && media.contains(#"X-NAME="standup""#)
        }, "\(media)")
        #expect(try await relay.post("/archive/\(archiveId)/stop").0 == 200)
        #expect(try await eventually(30) {
            media = await mediaPlaylist()
            return media.split(separator: "\n").contains { $0.contains("archive-\(archiveId)") && $0.contains("END-DATE=") }
        }, "\(media)")

        // What screensub printed meanwhile, in order: dates, ranges as they started and ended, frames.
        // (Until it has printed the marker, the recording's end and three segments: it starts at the live edge.)
        #expect(try await eventually(30) {
            let lines = following.outputSoFar.split(separator: "\n")
            return lines.contains { $0.contains("break-1") } && lines.contains { $0.contains("archive-\(archiveId)") && $0.contains("END-DATE") }
                && lines.count { $0.contains(#""event":"segment""#) } >= 3
        }, "\(following.outputSoFar.suffix(2000))")
        following.signal(SIGTERM)
        let followed = await following.wait(timeout: 10)
        #expect(followed.standardError.isEmpty, "\(followed.standardError)")
        let events = followed.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let segmentEvents = events.filter { $0["event"] as? String == "segment" }
        let frameEvents = events.filter { $0["event"] as? String == "frame" }
        let rangeEvents = events.filter { $0["event"] as? String == "dateRange" }.compactMap { $0["attributes"] as? [String: String] }
        #expect(segmentEvents.count >= 3 && frameEvents.count >= 3, "\(followed.standardOutput)")
        #expect(rangeEvents.contains { $0["ID"] == "archive-\(archiveId)" && $0["END-DATE"] != nil }, "\(rangeEvents)")
        #expect(rangeEvents.contains { $0["ID"] == "break-1" && $0["SCTE35-OUT"] == "0xFC302000" && $0["X-TITLE"] == "Sponsor" }, "\(rangeEvents)")
        #expect(rangeEvents.contains { $0["CLASS"] == "com.screenpub.pause" && $0["END-DATE"] != nil }, "\(rangeEvents)")
        #expect(frameEvents.allSatisfy { $0["metadata"] as? String == $0["captureTime"] as? String && $0["captureTime"] != nil })
        let times = frameEvents.compactMap { $0["time"] as? Double }
        #expect(times == times.sorted() && times.count == frameEvents.count)
        // Each segment's date is the capture time of the first frame printed after it.
        for (index, event) in events.enumerated() where event["event"] as? String == "segment" {
            // (The last segment may have been cut short by the end of the follow.)
            guard let firstFrame = events[(index + 1)...].first(where: { $0["event"] as? String == "frame" }) else { continue }
            #expect(firstFrame["captureTime"] as? String == event["programDateTime"] as? String, "\(event) \(firstFrame)")
        }

        // Given the media playlist itself, it reloads it as the stream goes on (five segments: past the three it starts with).
        let direct = try await ChildProcess.run(
            ChildProcess.productsDirectory + "/screensub",
            ["--hls", "\(base)/stream.m3u8?token=\(viewerToken)", "--print-metadata", "--json", "--segments", "5"], timeout: 60)
        #expect(direct.status == 0 && direct.standardOutput.components(separatedBy: #""event":"segment""#).count == 6, "\(direct.standardOutput) \(direct.standardError)")

        // The viewer page's HLS mode plays it in Chromium (Media Source Extensions) with the metadata and events.
        struct HLSViewerState: Decodable {
            var mode: String?
            var framesDecoded: Int
            var lastMetadata: String?
            var lastLatencyMs: Double?
            var width: Int
            var dateRanges: [[String: String]]?
            var problem: String?
            var metadataText: String
            var eventsText: String
        }
        let browser = try await HeadlessBrowser(url: "\(relay.base)/view/\(session.sessionId)?token=\(viewerToken)&hls=1")
        defer { browser.close() }
        let expression = """
            typeof screenViewer === 'undefined' ? null : ({ ...screenViewer, streams: undefined,
               metadataText: document.getElementById('metadata').textContent, eventsText: document.getElementById('events').textContent })
            """
        var watched: HLSViewerState?
        let reloaded = Locked(false)
        let played = try await eventually(40) {
            watched = try? await browser.evaluate(expression)
            if watched == nil { await browser.reloadOnceIfItsScriptFailedToLoad(reloaded) }
            return (watched?.framesDecoded ?? 0) > 3 && watched?.lastMetadata != nil && watched?.problem == nil
                && watched?.dateRanges?.contains { $0["ID"] == "break-1" } == true
        }
        // A page whose script never ran: what it fetched, to tell a failed fetch from a slow machine.
        let page = watched == nil ? await browser.loadReport() : ""
        #expect(played, "\(String(describing: watched)) \(page)")
        #expect(watched?.mode == "hls" && watched?.width == 320)
        #expect(watched?.lastMetadata?.hasPrefix("20") == true && watched?.metadataText == watched?.lastMetadata, "the capture time shown: \(String(describing: watched))")
        #expect((watched?.lastLatencyMs ?? -1) > 0, "capture → display over HLS is seconds, and positive")
        #expect(watched?.dateRanges?.contains { $0["ID"] == "break-1" && $0["X-TITLE"] == "Sponsor" } == true, "\(String(describing: watched?.dateRanges))")
        #expect(watched?.eventsText.contains("Sponsor") == true, "\(String(describing: watched?.eventsText))")

        // ffmpeg plays the live stream from its URL: AV1 at the screen's size, frames decoded.
        let probe = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", "\(base)/index.m3u8?token=\(viewerToken)"],
            timeout: 60)
        #expect(probe.standardOutput.contains("av1,320,240"), "\(probe.standardOutput) \(probe.standardError)")
        let decoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-live_start_index", "0", "-i", "\(base)/index.m3u8?token=\(viewerToken)", "-frames:v", "10", "-f", "null", "-"],
            timeout: 60)
        #expect(decoded.status == 0, "\(decoded.standardError)")
    }

    /// A changing 320×240 screen: a 40-pixel column painted white or blue every 150 ms, moving across, until
    /// cancelled.
    static func paintStripes(_ painter: sending XPainter) -> Task<Void, any Error> {
        Task {
            var index = 0
            while !Task.isCancelled {
                painter.fill(PixelRect(x: (index % 8) * 40, y: 0, width: 40, height: 240), color: index % 2 == 0 ? 0xFFFFFF : 0x2040A0)
                index += 1
                try await Task.sleep(for: .milliseconds(150))
            }
        }
    }
}
