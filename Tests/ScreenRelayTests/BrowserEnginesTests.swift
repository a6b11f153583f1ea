import Foundation
import ScreenMedia
import ScreenTesting
import ScreenTransport
import Testing

/// The viewer pages in the three browser engines Debian 12 packages (Chromium, Firefox ESR, WebKitGTK), each fed
/// by a real screenpub capturing a private Xvfb through its embedded relay. Where an engine cannot decode a
/// stream, the page must say so in a sentence, never show a black picture.
/// One browser at a time: each engine with its Xvfb, relay and encoder takes most of a core while it starts, and
/// the suite's timing-sensitive tests (LL-HLS under attack, thin links) run beside them.
@Suite(.serialized, .watchdog()) struct BrowserEnginesTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"

    static func requireInstalled(_ engine: BrowserEngine) throws {
        if let missing = engine.missing { try Test.cancel(Comment(rawValue: missing)) }
    }

    /// A screenpub sharing a 320×240 display (its embedded relay serving the pages) and the viewer URL it prints.
    func share(_ display: VirtualDisplay, _ options: [String]) async throws -> (ChildProcess, String) {
        let publisher = try ChildProcess(
            screenpub, ["--display", display.name, "--port", "0", "--duration", "90", "--no-cursor", "--control-socket", ""] + options)
        let viewerURL = try await ViewerTests.viewerURL(of: publisher)
        guard viewerURL.hasPrefix("http://127.0.0.1:") else {
            publisher.endInBackground(signal: SIGTERM, timeout: 20)
            throw TestFailure("screenpub printed no viewer URL: \(publisher.outputSoFar.suffix(1000))")
        }
        return (publisher, viewerURL)
    }

    /// Points in each quadrant of a 320×240 picture, in ``TestPattern/quadrantColors`` order.
    static let quadrantPoints = [(40, 30), (280, 30), (40, 210), (280, 210)]

    /// The HLS page's state.
    struct HLSPage: Decodable { var framesDecoded: Int; var problem: String?; var lastMetadata: String?; var rendition: String? }
    static let hlsExpression = """
        typeof screenViewer === 'undefined' ? null : ({ framesDecoded: screenViewer.framesDecoded, problem: screenViewer.problem,
          lastMetadata: screenViewer.lastMetadata, rendition: screenViewer.rendition })
        """
    /// The RGB at ``quadrantPoints`` of what the <video> `id` shows, drawn at 320×240.
    static func videoPixelsExpression(_ id: String) -> String {
        let points = quadrantPoints.map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
        return """
            (() => { const v = document.getElementById('\(id)'); const c = document.createElement('canvas');
              c.width = 320; c.height = 240; const g = c.getContext('2d'); g.drawImage(v, 0, 0, 320, 240);
              return [\(points)].map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3))); })()
            """
    }

    /// The start of the rendition line for a share in `codec`: "AV1 (av01.0.…M.08)", "H.264 (avc1.42…)"
    /// (openh264's Constrained Baseline).
    static func renditionPrefix(_ codec: VideoCodec) -> String {
        codec == .h264 ? "H.264 (avc1.42" : "AV1 (av01.0."
    }

    /// The default share (AV1 Main, 4:2:0) and an H.264 share (`--codec h264`: Annex B on the wire, the avc form
    /// with a description for WebCodecs): every engine shows the picture with its metadata and names the rendition,
    /// live (WebCodecs) and over HLS (Media Source Extensions).
    @Test(arguments: BrowserEngine.allCases, [VideoCodec.av1, .h264])
    func aShareIsShownLiveAndOverHLS(engine: BrowserEngine, codec: VideoCodec) async throws {
        try Self.requireInstalled(engine)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        _ = ViewerTests.paintQuadrants(painter, width: 320, height: 240)
        let (publisher, viewerURL) = try await share(display, ["--metadata", "engine check"] + (codec == .av1 ? [] : ["--codec", codec.rawValue]))
        defer { publisher.endInBackground(signal: SIGTERM, timeout: 20) }

        let live = try await engine.open(viewerURL)
        defer { live.close() }
        let state = try await ViewerTests.waitForViewer(live) { $0.framesDecoded >= 1 || $0.problem != nil }
        #expect(state.framesDecoded >= 1 && state.problem == nil && state.decoderErrors == 0, "\(engine): \(state)")
        #expect(state.width == 320 && state.height == 240 && state.lastMetadata == "engine check" && state.metadataText == "engine check", "\(state)")
        #expect(state.renditionText.hasPrefix(Self.renditionPrefix(codec)) && state.rendition == state.renditionText, "\(engine): \(state)")
        let pixels: [[Int]] = try await live.evaluate(ViewerTests.pixelsExpression(Self.quadrantPoints))
        for (index, pixel) in pixels.enumerated() {
            #expect(ViewerTests.differs(pixel, TestPattern.quadrantColors[index]) <= 12, "\(engine), \(codec), quadrant \(index): \(pixel)")
        }
        live.close()

        try await expectShownOverHLS(viewerURL, engine: engine, codec: codec)
    }

    /// An AV1 share's HLS in WebKitGTK without its AV1, VP9 and VP8 decoders: the page plays the H.264 variant the
    /// relay lists beside the stream, with its picture and metadata, and names it.
    @Test func withoutAV1TheHLSPagePlaysTheH264Variant() async throws {
        try Self.requireInstalled(.webKitGTK)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        _ = ViewerTests.paintQuadrants(painter, width: 320, height: 240)
        let (publisher, viewerURL) = try await share(display, ["--metadata", "engine check", "--codec", "av1"])
        defer { publisher.endInBackground(signal: SIGTERM, timeout: 20) }
        try await expectShownOverHLS(viewerURL, engine: .webKitGTK, decoders: .withoutAV1, codec: .h264)
    }

    /// The viewer page's HLS mode (`&hls=1`, Media Source Extensions) in `engine` with `decoders` shows the share of
    /// the quadrants with its metadata ("engine check"), and names the `codec` variant it plays.
    func expectShownOverHLS(
        _ viewerURL: String, engine: BrowserEngine, decoders: BrowserEngine.Decoders = .stock, codec: VideoCodec
    ) async throws {
        let hls = try await engine.open(viewerURL + "&hls=1", decoders: decoders)
        defer { hls.close() }
        var played: HLSPage?
        let reloaded = Locked(false)
        let playing = try await eventually(45) {
            played = try? await hls.evaluate(Self.hlsExpression)
            if played == nil { await hls.reloadOnceIfItsScriptFailedToLoad(reloaded) }
            return ((played?.framesDecoded ?? 0) >= 1 && played?.lastMetadata != nil) || played?.problem != nil
        }
        #expect(played?.rendition?.hasPrefix(Self.renditionPrefix(codec)) == true && played?.rendition?.hasSuffix("over HLS") == true, "\(String(describing: played))")
        // A page whose script never ran: what it fetched, to tell a failed fetch from a slow machine.
        let loads = played == nil ? await hls.loadReport() : ""
        #expect(playing && played?.problem == nil && played?.lastMetadata == "engine check", "\(engine), \(codec): \(String(describing: played)) \(loads)")
        // (A video that has counted a frame may not have painted one yet: its picture is waited for.)
        var shown: [[Int]] = []
        _ = try await eventually(10) {
            shown = (try? await hls.evaluate(Self.videoPixelsExpression("hls-video"))) ?? []
            return shown.count == 4 && shown.enumerated().allSatisfy { ViewerTests.differs($1, TestPattern.quadrantColors[$0]) <= 16 }
        }
        for (index, pixel) in shown.enumerated() {
            #expect(ViewerTests.differs(pixel, TestPattern.quadrantColors[index]) <= 16, "\(engine), \(codec) over HLS, quadrant \(index): \(pixel)")
        }
    }

    /// Where the browser cannot decode the stream as published, the relay sends it screenpub's H.264 rendition
    /// (the page said it decodes that): the page shows it, with its metadata, and names it.
    static func expectTheH264Rendition(_ state: ViewerTests.ViewerState, engine: BrowserEngine) {
        #expect(state.rendition?.hasPrefix("H.264 (avc1.42") == true && state.renditionText == state.rendition, "\(engine): \(state)")
        #expect(state.framesDecoded >= 1 && state.problem == nil && state.lastMetadata != nil, "\(engine): \(state)")
    }

    /// Where nothing it decodes comes (a publisher that makes no rendition), the page says so in a sentence, never a
    /// black picture.
    static func expectTheSentence(_ state: ViewerTests.ViewerState, in browser: any BrowserPage, engine: BrowserEngine, sentence: String) async throws {
        #expect(state.framesDecoded == 0, "\(engine) decoded a stream it says it cannot: \(state)")
        #expect(state.problem?.hasPrefix(sentence) == true, "\(engine): \(state)")
        let shown: String = try await browser.evaluate("document.getElementById('problem').hidden ? '' : document.getElementById('problem').textContent")
        #expect(shown == state.problem, "the sentence is on the page")
    }

    /// A `--chroma 444` share (AV1 High profile). Chromium and Firefox draw it in full colour (Firefox although its
    /// `isConfigSupported` says no). WebKitGTK decodes no AV1 High profile: it is sent the H.264 rendition.
    @Test(arguments: BrowserEngine.allCases)
    func aFourFourFourShareIsDrawnInFullColourOrInItsH264Rendition(engine: BrowserEngine) async throws {
        try Self.requireInstalled(engine)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        painter.showColouredLines(PixelRect(x: 0, y: 0, width: 320, height: 240))
        let (publisher, viewerURL) = try await share(display, ["--codec", "av1", "--chroma", "444"])
        defer { publisher.endInBackground(signal: SIGTERM, timeout: 20) }
        let browser = try await engine.open(viewerURL)
        defer { browser.close() }
        let state = try await ViewerTests.waitForViewer(browser) { $0.framesDecoded >= 2 || $0.problem != nil }
        if engine == .webKitGTK {
            Self.expectTheH264Rendition(state, engine: engine)
            return
        }
        #expect(state.renditionText.hasPrefix("AV1 High profile (4:4:4 colour) (av01.1."), "\(engine): \(state)")
        #expect(state.framesDecoded >= 2 && state.problem == nil, "\(engine): \(state)")
        let rgba: [Int] = try await browser.evaluate("Array.from(document.getElementById('screen').getContext('2d').getImageData(0, 0, 320, 240).data)")
        let error = TestPattern.colouredLineError(try ViewerTests.frame(rgba: rgba, width: 320, height: 240), in: PixelRect(x: 16, y: 16, width: 288, height: 208))
        #expect(error < 20, "\(engine): the lines' colour error on the canvas: \(error)")
    }

    /// A browser without AV1 (Firefox with `media.av1.enabled` false; WebKitGTK with GStreamer's AV1, VP9 and VP8
    /// decoders ranked out: H.264 alone, as an iPhone) is sent the H.264 rendition of a default share and of a
    /// `--chroma 444` one, and shows the screen with its metadata.
    @Test(arguments: [BrowserEngine.firefox, .webKitGTK], [["--codec", "av1"], ["--codec", "av1", "--chroma", "444"]])
    func aBrowserWithoutAV1GetsTheH264Rendition(engine: BrowserEngine, options: [String]) async throws {
        let (state, browser, publisher, display) = try await watchWithoutAV1(engine: engine, options: options)
        defer {
            _ = display
            browser.close()
            publisher.endInBackground(signal: SIGTERM, timeout: 20)
        }
        Self.expectTheH264Rendition(state, engine: engine)
        let rgba: [Int] = try await browser.evaluate("Array.from(document.getElementById('screen').getContext('2d').getImageData(0, 0, 320, 240).data)")
        let picture = try ViewerTests.frame(rgba: rgba, width: 320, height: 240)
        for (index, (x, y)) in Self.quadrantPoints.enumerated() {
            #expect(TestPattern.difference(picture, x: x, y: y, TestPattern.quadrantColors[index]) <= 16, "\(engine) \(options): quadrant \(index)")
        }
    }

    /// With `--rendition none` (a machine that must never run a second encoder), such a browser is told in a
    /// sentence that it cannot decode the share.
    @Test func withoutARenditionABrowserWithoutAV1IsToldWhyNot() async throws {
        let (state, browser, publisher, display) = try await watchWithoutAV1(engine: .webKitGTK, options: ["--rendition", "none"])
        defer {
            _ = display
            browser.close()
            publisher.endInBackground(signal: SIGTERM, timeout: 20)
        }
        try await Self.expectTheSentence(state, in: browser, engine: .webKitGTK, sentence: "This browser cannot decode the stream: it is AV1 (av01.0.")
        #expect(state.renditionText.hasPrefix("AV1 (av01.0."), "the rendition line names the stream it cannot decode: \(state)")
    }

    /// A share of the quadrants with `options`, watched in `engine` without its AV1 decoder, until it shows two
    /// pictures or a sentence.
    /// The display and its painter come back too: the display, and the windows painted on it, live as long as the
    /// caller holds them.
    private func watchWithoutAV1(
        engine: BrowserEngine, options: [String]
    ) async throws -> (ViewerTests.ViewerState, any BrowserPage, ChildProcess, (VirtualDisplay, XPainter)) {
        try Self.requireInstalled(engine)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        _ = ViewerTests.paintQuadrants(painter, width: 320, height: 240)
        let (publisher, viewerURL) = try await share(display, options)
        do {
            let browser = try await engine.open(viewerURL, decoders: .withoutAV1)
            let state = try await ViewerTests.waitForViewer(browser) { $0.problem != nil || $0.framesDecoded >= 2 }
            return (state, browser, publisher, (display, painter))
        } catch {
            publisher.endInBackground(signal: SIGTERM, timeout: 20)
            throw error
        }
    }

    /// The archive page plays a recording (VP9 in WebM, through the browser's own <video>) in every engine, and
    /// shows the metadata of the frame on screen as it is sought.
    @Test(arguments: BrowserEngine.allCases)
    func theArchivePagePlaysTheRecordingWithItsMetadataInSync(engine: BrowserEngine) async throws {
        try Self.requireInstalled(engine)
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (relay, id, moderator) = try await ArchivePageTests.archive(codec: .vp9, in: directory)
        let browser = try await engine.open("\(relay.base)/archive/\(id)/view?token=\(moderator)")
        defer { browser.close() }
        struct PageState: Decodable { var status: String; var cues: Int; var shownMetadata: String?; var problem: String? }
        func waitFor(_ condition: (PageState) -> Bool) async throws -> PageState? {
            var current: PageState?
            _ = try await eventually(20) {
                current = try? await browser.evaluate("typeof archiveViewer === 'undefined' ? null : archiveViewer")
                return current.map(condition) == true
            }
            return current
        }
        let loaded = try await waitFor { $0.status.contains("frames") || $0.problem != nil }
        #expect(loaded?.cues == 20 && loaded?.problem == nil, "\(engine): \(String(describing: loaded))")
        #expect(loaded?.shownMetadata == "frame 0", "\(engine): \(String(describing: loaded))")
        // Seeking shows the metadata of the frame on screen: frame N was captured at N/5 s.
        for (time, expected) in [(2.0, "frame 10"), (0.4, "frame 2"), (3.8, "frame 19")] {
            let _: Bool = try await browser.evaluate("(document.getElementById('recording').currentTime = \(time), true)")
            let shown = try await waitFor { $0.shownMetadata == expected }
            #expect(shown?.shownMetadata == expected, "\(engine) at \(time) s: \(String(describing: shown))")
        }
        let text: String = try await browser.evaluate("document.getElementById('metadata').textContent")
        #expect(text == "frame 19")
        // The picture itself: the recorded quadrants.
        let pixels: [[Int]] = try await browser.evaluate(Self.videoPixelsExpression("recording"))
        for (index, pixel) in pixels.enumerated() {
            #expect(ViewerTests.differs(pixel, TestPattern.quadrantColors[index]) <= 16, "\(engine), recorded quadrant \(index): \(pixel)")
        }
    }
}
