import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenTransportClient
import Testing

/// HLS with two variants: an AV1 share's playlist lists an H.264 variant, packaged from the rendition the relay asks
/// the publisher for while that variant is read, on the same timeline (dates, date ranges, the frames' ID3 metadata
/// and capture times), and the rendition stops once nobody reads it.
@Suite(.watchdog()) struct HLSVariantsTests {
    @Test func theH264VariantHasTheStreamsTimelineAndStopsWhenNobodyReadsIt() async throws {
        let relay = try await RunningRelay {
            $0.hlsSegmentSeconds = 1
            $0.hlsIdleSeconds = 8
        }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let moderator = try await relay.token(session: session.sessionId, role: .moderator)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painting = HLSTests.paintStripes(try XPainter(displayName: display.name))
        defer { painting.cancel() }
        // The default metadata: each frame's capture time, which both variants must carry for the same frames.
        let publisher = try ChildProcess(ChildProcess.productsDirectory + "/screenpub", [
            "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--keepalive", "1", "--control-socket", "",
        ])
        defer { publisher.endInBackground(signal: SIGTERM) }
        let base = "\(relay.base)/hls/\(session.sessionId)"
        let http = RelayHTTPClient()
        func text(_ file: String) async throws -> String {
            String(decoding: try await http.send("GET", "\(base)/\(file)?token=\(viewerToken)").body, as: UTF8.self)
        }

        let index = try await text("index.m3u8")
        let variants = HLSPlaylistParser.variantList(index)
        #expect(variants.map { $0.uri.prefix { $0 != "?" } } == ["h264.m3u8", "stream.m3u8"], "\(index)")
        #expect(variants.first?.codecs.hasPrefix("avc1.42C0") == true && variants.last?.codecs.hasPrefix("av01.0.") == true, "\(index)")
        #expect(HLSPlaylistParser.preferredVariant(index)?.uri.hasPrefix("stream.m3u8") == true)

        let marker = #"{"id":"chapter-1","duration":30,"attributes":{"X-TITLE":"Both"}}"#
        let posted = try await http.send("POST", "\(relay.base)/session/\(session.sessionId)/marker", bearer: moderator, json: Data(marker.utf8))
        #expect(posted.status == 204)

        // The H.264 variant's first request waits for the rendition and its first segments.
        var h264 = try await text("h264.m3u8")
        #expect(h264.contains("#EXT-X-MAP:URI=\"h264-init-0.mp4?token=") && h264.contains("h264-seg-"), "\(h264)")
        var media = ""
        #expect(try await eventually(30) {
            h264 = (try? await text("h264.m3u8")) ?? ""
            media = (try? await text("stream.m3u8")) ?? ""
            return h264.components(separatedBy: "#EXTINF:").count > 4 && media.components(separatedBy: "#EXTINF:").count > 4
        }, "\(h264)\n\(media)")
        // LL-HLS in both: parts, and the part to ask for next, each with the variant's own names.
        #expect(h264.contains("#EXT-X-PART:DURATION=") && h264.contains("URI=\"h264-part-") && h264.contains("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"h264-part-"), "\(h264)")
        #expect(media.contains("URI=\"part-") && !media.contains("h264-"), "\(media)")
        // The marker's date range, the same line in both.
        let ranges = [h264, media].map { $0.split(separator: "\n").filter { $0.contains("ID=\"chapter-1\"") } }
        #expect(ranges[0].count == 1 && ranges[0] == ranges[1], "\(ranges)")

        // Each variant's frames: their ID3 metadata is their capture time, a segment's date its first frame's. The
        // rendition's frames are frames of the stream (it may skip some to hold its rate): the same capture times.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-variants-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        /// Every segment of `playlist`, fetched (the window moves on, and a variant nobody asks for goes idle: both
        /// variants are fetched before either is read, which takes a while on a loaded machine).
        func fetch(_ playlist: String) async throws -> [(segment: HLSPlaylistParser.Segment, path: String)] {
            var fetched: [(segment: HLSPlaylistParser.Segment, path: String)] = []
            for segment in try #require(HLSPlaylistParser.media(playlist)).segments {
                guard let uri = segment.uri else { continue }
                let path = "\(directory)/\(uri.prefix { $0 != "?" })"
                let answer = try await http.send("GET", "\(base)/\(uri)")
                #expect(answer.status == 200, "\(uri): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
                try answer.body.write(to: URL(fileURLWithPath: path))
                fetched.append((segment, path))
            }
            return fetched
        }
        /// The capture times of the fetched segments' frames, each segment's checked.
        func captureTimes(_ fetched: [(segment: HLSPlaylistParser.Segment, path: String)]) async throws -> [String] {
            var all: [String] = []
            for (segment, path) in fetched {
                let read = try await ChildProcess.run("/usr/bin/python3", [TestFixtures.emsgReader, path])
                let events = read.standardOutput.split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                let texts = events.compactMap { ($0["txxx"] as? [String: String])?[ID3MetadataTag.metadataDescription] }
                let captured = events.compactMap { ($0["txxx"] as? [String: String])?[ID3MetadataTag.captureTimeDescription] }
                #expect(!captured.isEmpty && texts == captured && captured.first == segment.programDateTime, "\(path): \(captured) \(String(describing: segment.programDateTime))")
                all += captured
            }
            return all
        }
        let (renditionSegments, streamSegments) = (try await fetch(h264), try await fetch(media))
        let renditionTimes = try await captureTimes(renditionSegments)
        let streamTimes = try await captureTimes(streamSegments)
        let overlap = renditionTimes.filter { $0 >= streamTimes.first ?? "~" && $0 <= streamTimes.last ?? "" }
        #expect(!overlap.isEmpty && Set(overlap).isSubset(of: Set(streamTimes)), "H.264 \(renditionTimes)\nAV1 \(streamTimes)")

        // Nobody reads the H.264 variant: it stops being packaged (idle 8 s here), and the rendition a linger later.
        #expect(try await eventually(60) {
            let metrics = String(decoding: (try? await http.send("GET", "\(relay.base)/metrics"))?.body ?? Data(), as: UTF8.self)
            return metrics.contains("screenrelay_renditions_stopped_total 1")
        })
        #expect(try await eventually(30) { publisher.errorsSoFar.contains("stopped the h264 rendition") }, "\(publisher.errorsSoFar.suffix(1500))")
    }

    /// The publisher goes and comes back (a new stream) while a player reads the H.264 variant: the new stream's
    /// rendition is asked for and the variant goes on after a discontinuity.
    @Test func theH264VariantFollowsThePublisherThatCameBack() async throws {
        let relay = try await RunningRelay { $0.hlsSegmentSeconds = 1 }
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painting = HLSTests.paintStripes(try XPainter(displayName: display.name))
        defer { painting.cancel() }
        func publish() throws -> ChildProcess {
            try ChildProcess(ChildProcess.productsDirectory + "/screenpub", [
                "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--control-socket", "",
            ])
        }
        let first = try publish()
        defer { first.endInBackground(signal: SIGKILL) }
        let playlist = "\(relay.base)/hls/\(session.sessionId)/h264.m3u8?token=\(viewerToken)"
        let http = RelayHTTPClient()
        func segments() async -> [HLSPlaylistParser.Segment] {
            let text = String(decoding: (try? await http.send("GET", playlist))?.body ?? Data(), as: UTF8.self)
            return HLSPlaylistParser.media(text)?.segments.filter { $0.uri != nil } ?? []
        }
        #expect(try await eventually(40) { await segments().count >= 2 })
        first.signal(SIGKILL)
        _ = await first.wait(timeout: 10)
        let cameBack = Date()
        let second = try publish()
        defer { second.endInBackground(signal: SIGTERM) }
        // Segments of the new stream's rendition: captured after it came back.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var listed: [HLSPlaylistParser.Segment] = []
        #expect(try await eventually(40) {
            listed = await segments()
            return listed.compactMap { $0.programDateTime.flatMap(formatter.date(from:)) }.filter { $0 > cameBack }.count >= 2
        }, "\(listed.map { ($0.uri ?? "", $0.programDateTime ?? "") })\n\(second.errorsSoFar.suffix(1000))")
        #expect(second.errorsSoFar.contains("publishing the h264 rendition"), "\(second.errorsSoFar.suffix(1500))")
    }
}
