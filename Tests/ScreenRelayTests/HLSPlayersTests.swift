import Foundation
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenTransportClient
import Testing

/// Players that are not ours play the relay's LL-HLS playlist as the plain HLS it also is: GStreamer's hlsdemux2
/// (Debian's 1.22, which knows no LL-HLS: it asks for playlists and whole segments, never a part) and ffmpeg, each
/// on a fresh session's HLS, with the picture they decode checked by colour; and an H.264 share's HLS in a
/// GStreamer that decodes H.264 alone, as an Apple device without AV1 hardware does.
@Suite(.watchdog()) struct HLSPlayersTests {
    static let magenta = (r: 200, g: 40, b: 160)
    /// The picture is checked at (80, 200): away from the pointer (in the middle of the screen) and the moving square.

    /// A relay at its default segment lengths, and screenpub sharing a display painted magenta in `codec`; the
    /// playlist URL.
    static func share(codec: String = "auto") async throws -> (url: String, relay: RunningRelay, publisher: ChildProcess, display: VirtualDisplay, painting: Task<Void, any Error>) {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        let color = XPainter.pixel(red: UInt8(magenta.r), green: UInt8(magenta.g), blue: UInt8(magenta.b))
        // A window (what the root shows can be cleared by the server) with a square that moves: a changing screen
        // that stays magenta below its top row. The task holds the painter, whose connection the window lives as long as.
        let window = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: color)
        let painting = Task {
            var index = 0
            while !Task.isCancelled {
                painter.fill(window: window, PixelRect(x: 0, y: 0, width: 320, height: 20), color: color)
                painter.fill(window: window, PixelRect(x: (index % 16) * 20, y: 0, width: 20, height: 20), color: 0xFFFFFF)
                index += 1
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let publisher = try ChildProcess(ChildProcess.productsDirectory + "/screenpub", [
            "--display", display.name, "--server", relay.base, "--token", session.token, "--fps", "5", "--control-socket", "", "--codec", codec,
        ])
        try await relay.waitForConnections(1, timeout: .seconds(60))
        return ("\(relay.base)/hls/\(session.sessionId)/index.m3u8?token=\(viewerToken)", relay, publisher, display, painting)
    }

    static func isMagenta(_ pixel: [Int]) -> Bool {
        pixel.count == 3 && abs(pixel[0] - magenta.r) < 30 && abs(pixel[1] - magenta.g) < 30 && abs(pixel[2] - magenta.b) < 30
    }

    @Test func gstreamersHLSDemux2PlaysItFromWholeSegments() async throws {
        let (url, relay, publisher, display, painting) = try await Self.share()
        defer { publisher.endInBackground(signal: SIGTERM) }
        defer { painting.cancel() }
        defer { withExtendedLifetime((relay, display)) {} }
        let log = try await Self.playInGStreamer(url)
        // What it asked for: playlists without LL-HLS's query, and whole segments.
        let fetched = log.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "Downloading fragment uri: ") ?? line.range(of: "Fetching URI ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != "?" })
        }
        // (The H.264 variant, listed first: hlsdemux2 starts on the first variant, whatever its CODECS.)
        #expect(fetched.contains { $0.hasSuffix("/h264.m3u8") } && fetched.contains { $0.contains("/h264-seg-") }, "\(fetched)")
        #expect(!fetched.contains { $0.contains("/part-") || $0.contains("_HLS_") }, "\(fetched)")
    }

    /// GStreamer with its AV1, VP9 and VP8 decoders ranked out plays an H.264 share's LL-HLS, whose playlist names
    /// it `avc1`; ffprobe reads H.264 from its segments; the viewer page's HLS mode plays it in Chromium.
    @Test func gstreamerThatDecodesH264AlonePlaysAnH264Share() async throws {
        let (url, relay, publisher, display, painting) = try await Self.share(codec: "h264")
        defer { publisher.endInBackground(signal: SIGTERM) }
        defer { painting.cancel() }
        defer { withExtendedLifetime((relay, display)) {} }
        let playlist = String(decoding: try await RelayHTTPClient().send("GET", url).body, as: UTF8.self)
        #expect(playlist.contains("CODECS=\"avc1.42"), "\(playlist)")
        _ = try await Self.playInGStreamer(url, ranks: "av1dec:NONE,dav1ddec:NONE,avdec_av1:NONE,vp9dec:NONE,avdec_vp9:NONE,vp8dec:NONE")
        let probe = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,profile,width,height", "-of", "csv=p=0", url], timeout: 60)
        #expect(probe.standardOutput.contains("h264,Constrained Baseline,320,240"), "\(probe.standardOutput) \(probe.standardError)")

        struct HLSViewerState: Decodable { var mode: String?; var framesDecoded: Int; var lastMetadata: String?; var width: Int; var problem: String? }
        let viewer = url.replacingOccurrences(of: "/hls/", with: "/view/").replacingOccurrences(of: "/index.m3u8?", with: "?") + "&hls=1"
        let browser = try await HeadlessBrowser(url: viewer)
        defer { browser.close() }
        var watched: HLSViewerState?
        let played = try await eventually(40) {
            watched = try? await browser.evaluate("typeof screenViewer === 'undefined' ? null : ({ ...screenViewer, streams: undefined })")
            return (watched?.framesDecoded ?? 0) > 3 && watched?.lastMetadata != nil || watched?.problem != nil
        }
        #expect(played && watched?.problem == nil && watched?.mode == "hls" && watched?.width == 320, "\(String(describing: watched))")
    }

    /// An AV1 share's HLS lists an H.264 variant (first, for players that read no CODECS) beside it; GStreamer with its AV1, VP9 and VP8 decoders ranked out
    /// plays that variant, packaged from the rendition the relay asks the publisher for while the variant is read.
    @Test func gstreamerThatDecodesH264AlonePlaysTheH264VariantOfAnAV1Share() async throws {
        let (url, relay, publisher, display, painting) = try await Self.share()
        defer { publisher.endInBackground(signal: SIGTERM) }
        defer { painting.cancel() }
        defer { withExtendedLifetime((relay, display)) {} }
        let playlist = String(decoding: try await RelayHTTPClient().send("GET", url).body, as: UTF8.self)
        let variants = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(variants.count == 2 && variants[0].contains("CODECS=\"avc1.42") && variants[1].contains("CODECS=\"av01."), "\(playlist)")
        #expect(playlist.contains("\nstream.m3u8?token=") && playlist.contains("\nh264.m3u8?token="), "\(playlist)")
        let log = try await Self.playInGStreamer(url, ranks: "av1dec:NONE,dav1ddec:NONE,avdec_av1:NONE,vp9dec:NONE,avdec_vp9:NONE,vp8dec:NONE")
        let fetched = log.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "Downloading fragment uri: ") ?? line.range(of: "Fetching URI ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != "?" })
        }
        #expect(fetched.contains { $0.contains("/h264-seg-") }, "\(fetched)")
        let metrics = String(decoding: try await RelayHTTPClient().send("GET", "\(relay.base)/metrics").body, as: UTF8.self)
        #expect(metrics.contains("screenrelay_renditions_asked_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("rendition") })")
    }

    /// Plays `url` in GStreamer (`ranks`: its `GST_PLUGIN_FEATURE_RANK`) until ten pictures have come, and checks the
    /// last one is the share's magenta; its log.
    static func playInGStreamer(_ url: String, ranks: String? = nil) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlsdemux2-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // HLS started by a first request (souphttpsrc gives up on an answer after 15 s, which the first two segments
        // of a cold start can take on a machine running every test at once); its playlist still starts with them.
        // (index.m3u8 is answered at once; the first variant's playlist, which hlsdemux2 reads, waits.)
        let index = try await RelayHTTPClient().send("GET", url)
        #expect(index.status == 200)
        if let first = HLSPlaylistParser.variants(String(decoding: index.body, as: UTF8.self)).first, let media = URL(string: first, relativeTo: URL(string: url)) {
            #expect(try await RelayHTTPClient().send("GET", media.absoluteString).status == 200)
        }
        // Pictures as RGB, decoded by GStreamer from the relay's URL (uridecodebin3 picks hlsdemux2), until ten
        // have come; then it is killed. Not stopped by an EOS (`identity eos-after=10`): in GStreamer 1.22 an EOS
        // that reaches decodebin3 while av1dec is decoding now and then makes av1dec fail "Failed to decode frame"
        // (6 of 150 runs on a loaded machine, from a static copy of the segments, which decode cleanly through
        // qtdemux and av1dec from a file; 0 of 300 runs stopped this way).
        let framesPath = "\(directory)/frames.rgb"
        let frameBytes = 320 * 240 * 3
        let player = try ChildProcess(
            "/usr/bin/gst-launch-1.0",
            ["-q", "uridecodebin3", "uri=\(url)", "!", "videoconvert", "!", "video/x-raw,format=RGB,width=320,height=240", "!",
             "filesink", "buffer-mode=unbuffered", "location=\(framesPath)"],
            environment: ProcessInfo.processInfo.environment.merging(
                ["GST_DEBUG": "adaptivedemux2:5", "GST_DEBUG_NO_COLOR": "1"].merging(ranks.map { ["GST_PLUGIN_FEATURE_RANK": $0] } ?? [:]) { $1 }) { $1 })
        func framesWritten() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: framesPath))?[.size] as? Int ?? 0) / frameBytes
        }
        let deadline = Date().addingTimeInterval(90)
        while framesWritten() < 10, !player.hasExited, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let endedByItself = player.hasExited
        player.signal(SIGKILL)
        let played = await player.wait(timeout: 10)
        // What it said went wrong, without its debug log.
        let lines = played.standardError.split(separator: "\n")
        let problems = lines.filter { $0.contains("ERROR") || $0.contains("WARN") }.suffix(20)
        #expect(!endedByItself && !lines.contains { $0.hasPrefix("ERROR:") } && framesWritten() >= 10,
            "\(framesWritten()) pictures; \((problems.isEmpty ? lines.suffix(20) : problems).joined(separator: "\n")) \(played.standardOutput.suffix(500))")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: framesPath))
        let frames = bytes.count / frameBytes
        let probes = (0..<frames).map { frame in bytes[(frame * frameBytes + (200 * 320 + 80) * 3)...].prefix(3).map(Int.init) }
        #expect(probes.last.map(Self.isMagenta) == true, "the last picture at (80, 200): \(String(describing: probes.last)); each: \(probes)")
        return played.standardError
    }

    @Test(arguments: ["auto", "h264"])
    func ffmpegPlaysItFromAColdStart(codec: String) async throws {
        let (url, relay, publisher, display, painting) = try await Self.share(codec: codec)
        defer { publisher.endInBackground(signal: SIGTERM) }
        defer { painting.cancel() }
        defer { withExtendedLifetime((relay, display)) {} }
        let picture = try await FFmpegPicture.last(of: url, width: 320, height: 240, frames: 10)
        let pixel = picture.withUnsafeBytes { bytes in
            let offset = 200 * picture.bytesPerRow + 80 * 4
            return [Int(bytes[offset + 2]), Int(bytes[offset + 1]), Int(bytes[offset])]  // BGRA
        }
        #expect(Self.isMagenta(pixel), "\(pixel)")
    }
}
