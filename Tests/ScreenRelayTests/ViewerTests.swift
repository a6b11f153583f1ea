import Foundation
import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenTesting
import ScreenWire
import Testing

/// The browser viewer in a real headless Chromium, fed by a real screenpub capturing Xvfb.
@Suite(.watchdog(), .serialized) struct ViewerTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"

    struct ViewerState: Decodable {
        var status: String
        var framesDecoded: Int
        var decoderErrors: Int
        var lastMetadata: String?
        var lastLatencyMs: Double?
        var codecString: String?
        /// The rendition line the status area shows ("AV1 (av01.0.08M.08)"), as state and as shown.
        var rendition: String?
        var renditionText: String
        var width: Int
        var height: Int
        var currentStreamId: UInt32?
        var problem: String?
        var metadataText: String
        var streamsText: String
        var paused: Bool
        /// Whether the "Paused by the presenter" badge shows.
        var pausedBadgeShown: Bool
    }

    /// The viewer's state; null until its script has run.
    static let stateExpression = """
        typeof screenViewer === 'undefined' ? null : ({ ...screenViewer, streams: undefined,
           metadataText: document.getElementById('metadata').textContent,
           streamsText: document.getElementById('streams').textContent,
           renditionText: document.getElementById('rendition').hidden ? '' : document.getElementById('rendition').textContent,
           pausedBadgeShown: !document.getElementById('paused-badge').hidden })
        """

    /// The canvas's RGB at each point.
    static func pixelsExpression(_ points: [(Int, Int)]) -> String {
        let list = points.map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
        return """
            (() => { const c = document.getElementById('screen').getContext('2d');
              return [\(list)].map(([x, y]) => Array.from(c.getImageData(x, y, 1, 1).data.slice(0, 3))); })()
            """
    }

    /// Polls the viewer until `condition` holds (or `timeout` s pass) and returns the last state. The time starts
    /// once the page's script runs: on a loaded machine fetching and running its modules may take a while itself
    /// (up to a minute is waited for that).
    static func waitForViewer(_ browser: any BrowserPage, timeout: Double = 30, until condition: (ViewerState) -> Bool) async throws -> ViewerState {
        let scriptDeadline = Date().addingTimeInterval(60)
        var state: ViewerState? = try await browser.evaluate(Self.stateExpression)
        let reloaded = Locked(false)
        while state == nil, Date() < scriptDeadline {
            try await Task.sleep(for: .milliseconds(100))
            // (A page being loaded again has no context to evaluate in for a moment.)
            state = try? await browser.evaluate(Self.stateExpression)
            if state == nil { await browser.reloadOnceIfItsScriptFailedToLoad(reloaded) }
        }
        guard var state else { throw TestFailure("the viewer script did not run within 60 s: \(await browser.loadReport())") }
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(state), Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = try await browser.evaluate(Self.stateExpression) ?? state
        }
        return state
    }

    /// The viewer URL a screenpub with an embedded relay prints (empty if it prints none within 10 s).
    static func viewerURL(of publisher: ChildProcess) async throws -> String {
        for _ in 0..<200 {
            if let line = publisher.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix("viewer:") }) {
                return line.dropFirst(7).trimmingCharacters(in: .whitespaces)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ""
    }

    /// A page's `getImageData` (RGBA, row after row) as a BGRA frame.
    static func frame(rgba: [Int], width: Int, height: Int) throws -> VideoFrame {
        try #require(rgba.count == width * height * 4)
        let frame = VideoFrame(width: width, height: height)
        frame.withUnsafeMutableBytes { pixels in
            for y in 0..<height {
                for x in 0..<width {
                    let (from, to) = ((y * width + x) * 4, y * frame.bytesPerRow + x * 4)
                    (pixels[to], pixels[to + 1], pixels[to + 2], pixels[to + 3]) = (UInt8(rgba[from + 2]), UInt8(rgba[from + 1]), UInt8(rgba[from]), 255)
                }
            }
        }
        return frame
    }

    static func differs(_ pixel: [Int], _ color: (r: UInt8, g: UInt8, b: UInt8)) -> Int {
        max(abs(pixel[0] - Int(color.r)), abs(pixel[1] - Int(color.g)), abs(pixel[2] - Int(color.b)))
    }

    /// Paints the four quadrant colours as windows and returns their ids.
    static func paintQuadrants(_ painter: XPainter, width: Int, height: Int) -> [UInt] {
        TestPattern.quadrantColors.enumerated().map { index, color in
            painter.createWindow(
                PixelRect(x: index % 2 * width / 2, y: index / 2 * height / 2, width: width / 2, height: height / 2),
                color: XPainter.pixel(red: color.r, green: color.g, blue: color.b))
        }
    }

    static let probePoints = [(80, 45), (560, 45), (80, 315), (560, 315)]

    /// AV1 (what `--codec auto` picks for this size) and VP9.
    @Test(arguments: [VideoCodec.av1, .vp9])
    func theEmbeddedRelaysViewerURLShowsTheScreenAndItsMetadataInChromium(codec: VideoCodec) async throws {
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        let windows = Self.paintQuadrants(painter, width: 640, height: 360)
        let publisher = try ChildProcess(
            screenpub,
            ["--display", display.name, "--port", "0", "--duration", "90", "--metadata", "viewer check", "--no-cursor"]
                + (codec == .av1 ? [] : ["--codec", codec.rawValue]))
        defer { publisher.endInBackground(signal: SIGTERM, timeout: 20) }
        let viewerURL = try await Self.viewerURL(of: publisher)
        #expect(viewerURL.hasPrefix("http://127.0.0.1:"))
        let browser = try await HeadlessBrowser(url: viewerURL)
        defer { browser.close() }

        let state = try await Self.waitForViewer(browser) { $0.framesDecoded >= 1 }
        #expect(state.framesDecoded >= 1, "viewer: \(state)")
        #expect(state.width == 640 && state.height == 360)
        #expect(state.lastMetadata == "viewer check")
        #expect(state.metadataText == "viewer check")
        #expect(state.streamsText.contains("screen 640×360 \(codec.rawValue.uppercased())"), "\(state.streamsText)")
        if codec == .av1 {
            // Read from the stream's sequence header: main profile, 8 bits, a level that fits 640×360.
            #expect(state.codecString?.hasPrefix("av01.0.") == true && state.codecString?.hasSuffix("M.08") == true, "\(state)")
        }
        // The status area names the rendition played.
        #expect(state.renditionText == "\(codec.rawValue.uppercased()) (\(state.codecString ?? "?"))" && state.rendition == state.renditionText, "\(state)")
        #expect(state.decoderErrors == 0)
        // Same machine, same clock: the latency shown is a real, small figure.
        #expect((state.lastLatencyMs ?? -1) >= 0 && (state.lastLatencyMs ?? .infinity) < 5000)
        let pixels: [[Int]] = try await browser.evaluate(Self.pixelsExpression(Self.probePoints))
        for (index, pixel) in pixels.enumerated() {
            #expect(Self.differs(pixel, TestPattern.quadrantColors[index]) <= 12, "quadrant \(index): \(pixel)")
        }

        // A change on screen reaches the canvas.
        painter.fill(window: windows[0], PixelRect(x: 0, y: 0, width: 320, height: 180), color: XPainter.pixel(red: 240, green: 240, blue: 240))
        let deadline = Date().addingTimeInterval(20)
        var topLeft: [[Int]] = []
        repeat {
            try await Task.sleep(for: .milliseconds(100))
            topLeft = try await browser.evaluate(Self.pixelsExpression([Self.probePoints[0]]))
        } while Self.differs(topLeft[0], (240, 240, 240)) > 12 && Date() < deadline
        #expect(Self.differs(topLeft[0], (240, 240, 240)) <= 12, "top-left after the change: \(topLeft)")
    }

    /// 4:4:4 (AV1 High profile, VP9 profile 1) decodes in Chromium, which is more than `isConfigSupported` says:
    /// 1-pixel red, green and blue lines keep their colour on the canvas.
    @Test(arguments: [VideoCodec.av1, .vp9])
    func aFourFourFourStreamIsDrawnInFullColour(codec: VideoCodec) async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: display.name)
        painter.showColouredLines(PixelRect(x: 0, y: 0, width: 320, height: 240))
        let publisher = try ChildProcess(
            screenpub,
            ["--display", display.name, "--port", "0", "--duration", "90", "--no-cursor", "--codec", codec.rawValue, "--chroma", "444",
             "--control-socket", ""])
        defer { publisher.endInBackground(signal: SIGTERM, timeout: 20) }
        let viewerURL = try await Self.viewerURL(of: publisher)
        let browser = try await HeadlessBrowser(url: viewerURL)
        defer { browser.close() }
        let state = try await Self.waitForViewer(browser) { $0.framesDecoded >= 2 }
        #expect(state.framesDecoded >= 2 && state.decoderErrors == 0 && state.problem == nil, "viewer: \(state)")
        #expect(state.codecString?.hasPrefix(codec == .av1 ? "av01.1." : "vp09.01.") == true, "\(state)")
        let rgba: [Int] = try await browser.evaluate(
            "Array.from(document.getElementById('screen').getContext('2d').getImageData(0, 0, 320, 240).data)")
        let canvas = try Self.frame(rgba: rgba, width: 320, height: 240)
        let error = TestPattern.colouredLineError(canvas, in: PixelRect(x: 16, y: 16, width: 288, height: 208))
        #expect(error < 20, "the lines' colour error on the canvas: \(error)")

        // The HLS mode plays it through Media Source Extensions (CODECS with the long 4:4:4 form), in full colour.
        let hls = try await HeadlessBrowser(url: viewerURL + "&hls=1")
        defer { hls.close() }
        struct Played: Decodable { var framesDecoded: Int; var problem: String? }
        var played: Played?
        #expect(try await eventually(60) {
            played = try? await hls.evaluate("typeof screenViewer === 'undefined' ? null : ({ framesDecoded: screenViewer.framesDecoded, problem: screenViewer.problem })")
            return (played?.framesDecoded ?? 0) >= 1 || played?.problem != nil
        }, "\(String(describing: played))")
        #expect(played?.problem == nil, "\(String(describing: played))")
        let video: [Int] = try await hls.evaluate("""
            (() => { const v = document.getElementById('hls-video'); const c = document.createElement('canvas');
              c.width = 320; c.height = 240; const g = c.getContext('2d'); g.drawImage(v, 0, 0, 320, 240);
              return Array.from(g.getImageData(0, 0, 320, 240).data); })()
            """)
        let frame = try Self.frame(rgba: video, width: 320, height: 240)
        let hlsError = TestPattern.colouredLineError(frame, in: PixelRect(x: 16, y: 16, width: 288, height: 208))
        #expect(hlsError < 20, "the lines' colour error in the HLS player: \(hlsError)")
    }

    @Test func theViewerSurvivesAPublisherThatReconnects() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        _ = Self.paintQuadrants(painter, width: 640, height: 360)
        func publish(_ metadata: String, controlSocket: String? = nil) throws -> ChildProcess {
            try ChildProcess(screenpub, [
                "--display", display.name, "--server", relay.base, "--token", session.token,
                "--duration", "90", "--metadata", metadata, "--no-cursor",
            ] + (controlSocket.map { ["--control-socket", $0] } ?? []))
        }
        let controlSocket = FileManager.default.temporaryDirectory.appendingPathComponent("viewer-\(UUID().uuidString).sock").path
        let first = try publish("first run", controlSocket: controlSocket)
        let browser = try await HeadlessBrowser(url: session.viewerURL)
        defer { browser.close() }
        let watching = try await Self.waitForViewer(browser) { $0.lastMetadata == "first run" }
        #expect(watching.lastMetadata == "first run", "viewer: \(watching)")
        let firstStream = try #require(watching.currentStreamId)

        // `screenpub pause` shows as a badge over the last picture; `resume` takes it away.
        #expect(try await ChildProcess.run(screenpub, ["pause", "--control-socket", controlSocket]).status == 0)
        let paused = try await Self.waitForViewer(browser) { $0.pausedBadgeShown }
        #expect(paused.paused && paused.pausedBadgeShown && paused.currentStreamId == firstStream, "viewer: \(paused)")
        #expect(try await ChildProcess.run(screenpub, ["resume", "--control-socket", controlSocket]).status == 0)
        let resumed = try await Self.waitForViewer(browser) { !$0.pausedBadgeShown }
        #expect(!resumed.paused && !resumed.pausedBadgeShown, "viewer: \(resumed)")

        first.signal(SIGTERM)
        #expect(await first.wait(timeout: 20).status == 0)
        let ended = try await Self.waitForViewer(browser) { $0.currentStreamId == nil }
        #expect(ended.status.contains("ended"), "viewer: \(ended)")
        #expect(ended.streamsText.contains("screen"))

        let second = try publish("second run")
        defer { second.endInBackground(signal: SIGTERM, timeout: 20) }
        let republished = try await Self.waitForViewer(browser) { $0.lastMetadata == "second run" }
        #expect(republished.lastMetadata == "second run", "viewer: \(republished)")
        #expect(republished.currentStreamId != nil && republished.currentStreamId != firstStream)
        #expect(republished.problem == nil)
    }

    @Test
    func theViewerChatsWithTheSession() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let token = try await relay.token(session: session.sessionId, role: .subscriber, data: "name=Cy")
        let browser = try await HeadlessBrowser(url: session.viewerURL)
        defer { browser.close() }
        _ = try await Self.waitForViewer(browser) { $0.status.hasPrefix("Connected") }
        let fromBrowser = try await RelayClient.connect(url: relay.webSocketURL, token: token, logger: quietLogger) { link, events in
            _ = try await events.nextControl()
            let _: Bool = try await browser.evaluate("(screenViewerSendChat('hi from the browser'), true)")
            guard case .signal(let heard)? = try await events.nextControl(where: { if case .signal = $0 { true } else { false } }) else {
                throw TestFailure("no chat from the browser")
            }
            try await link.send(.signal(Signal(type: "chat", data: "<b>hello</b> browser")))
            _ = try await events.nextControl(where: { if case .signal(let s) = $0 { s.data.hasSuffix("browser") && s.from != heard.from } else { false } })
            return heard
        }
        #expect(fromBrowser.type == "chat")
        #expect(fromBrowser.data == "hi from the browser")
        struct Line: Decodable { var sender: String; var text: String }
        var lines: [Line] = []
        for _ in 0..<50 where lines.count < 2 {
            lines = try await browser.evaluate("screenViewer.chat")
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(lines.map(\.text) == ["hi from the browser", "<b>hello</b> browser"])
        #expect(lines.last?.sender == "Cy", "the name from the token's name=, not its raw data")
        // Shown as text, never as markup.
        let markup: Bool = try await browser.evaluate("document.querySelector('#chat b') !== null")
        #expect(!markup)
        let shown: String = try await browser.evaluate("document.getElementById('chat').textContent")
        #expect(shown.contains("you") && shown.contains("Cy<b>hello</b> browser") && !shown.contains("name="), "\(shown)")
        // Join and leave lines name people, not ids (told once a second at most); a viewer has no recording controls.
        var told = shown
        for _ in 0..<300 where !told.contains("Cy left.") { told = try await browser.evaluate("document.getElementById('chat').textContent") }
        #expect(told.contains("Cy joined.") && told.contains("Cy left."), "\(told)")
        #expect(try await !browser.evaluate("!document.getElementById('moderator').hidden"))
    }

    @Test
    func aModeratorsPageRecordsListsArchivesAndEveryoneSeesTheTitleAndTheCount() async throws {
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try await RunningRelay(dataDirectory: directory)
        let (status, body) = try await relay.post("/session", json: ["title": "Friday demo ✓"])
        #expect(status == 200)
        let session = try JSONDecoder().decode(RunningRelay.SessionCreated.self, from: body)
        let streamId = Locked<UInt32?>(nil), done = Locked(false)
        defer { done.withLock { $0 = true } }
        // A publisher that answers every keyframe request (the page's subscription, then the recording's) with a
        // group of pictures.
        let frames = try TestMedia.encodedFrames(count: 20)
        let publisher = Task {
            try await RelayClient.connect(transport: relay.server.inProcessTransport, token: session.token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events)
                streamId.withLock { $0 = stream.streamId }
                var round: Int64 = 0
                while !done.value, try await events.nextControl(where: { $0 == .requestKeyframe(streamId: stream.streamId) }) != nil {
                    // Each group later than the one before, as a live publisher's would be.
                    for (index, frame) in frames.enumerated() {
                        var later = frame
                        later.captureTime = MediaTime(value: frame.captureTime.converted(to: 1000).value + round * 10_000, timescale: 1000)
                        try await link.send(
                            TestMedia.header(later, streamId: stream.streamId, sequence: UInt64(round) * 100 + UInt64(index)), payload: later.payload)
                    }
                    round += 1
                }
            }
        }
        defer { publisher.cancel() }
        while streamId.value == nil { try await Task.sleep(for: .milliseconds(10)) }
        let moderator = try await relay.token(session: session.sessionId, role: .moderator, data: "name=Mo")
        let browser = try await HeadlessBrowser(url: "\(relay.base)/view/\(session.sessionId)?token=\(moderator)")
        defer { browser.close() }
        struct Page: Decodable {
            var title: String
            var heading: String
            var viewerCount: Int
            var viewersText: String
            var moderatorShown: Bool
            var recording: String?
            var archives: [Archive]
            var archiveLinks: [String]
            var recordText: String
            var chatText: String
            struct Archive: Decodable { var id: String; var status: String; var size: Int }
        }
        let expression = """
            typeof screenViewer === 'undefined' ? null : ({ title: document.title, heading: document.getElementById('title').textContent,
              viewerCount: screenViewer.viewerCount, viewersText: document.getElementById('viewers').textContent,
              moderatorShown: !document.getElementById('moderator').hidden, recording: screenViewer.recording,
              archives: screenViewer.archives, archiveLinks: [...document.querySelectorAll('#archives a')].map((a) => a.href),
              recordText: document.getElementById('record').textContent, chatText: document.getElementById('chat').textContent })
            """
        func waitFor(_ what: String, _ condition: (Page) -> Bool) async throws -> Page {
            var page: Page? = try await browser.evaluate(expression)
            for _ in 0..<200 where page.map(condition) != true {
                try await Task.sleep(for: .milliseconds(100))
                page = try await browser.evaluate(expression)
            }
            guard let page, condition(page) else { throw TestFailure("\(what): \(String(describing: page))") }
            return page
        }
        var page = try await waitFor("the title and the moderator's controls") { $0.heading == "Friday demo ✓" && $0.moderatorShown }
        #expect(page.title == "Friday demo ✓ — screenpub")
        #expect(page.viewerCount == 1 && page.viewersText.contains("1 watching"), "\(page)")

        // A second viewer joins: counted, and named in the join line.
        let ada = try await relay.token(session: session.sessionId, role: .subscriber, data: "name=Ada%20Lovelace")
        let watching = Task {
            try await RelayClient.connect(url: relay.webSocketURL, token: ada, logger: quietLogger) { _, events in
                while !done.value, try await events.nextControl() != nil {}
            }
        }
        defer { watching.cancel() }
        page = try await waitFor("Ada counted") { $0.viewerCount == 2 && $0.chatText.contains("Ada Lovelace joined.") }

        // Record from the page, then stop: the archive is listed with a link to its own page.
        let _: Bool = try await browser.evaluate("(document.getElementById('record').click(), true)")
        page = try await waitFor("recording") { $0.recording != nil && $0.recordText.contains("Stop") && $0.archives.first?.status == "started" }
        let archive = try #require(page.archives.first)
        page = try await waitFor("the recording growing") { ($0.archives.first?.size ?? 0) > 0 }
        let _: Bool = try await browser.evaluate("(document.getElementById('record').click(), true)")
        page = try await waitFor("stopped") { $0.recording == nil && $0.archives.first?.status == "available" && $0.recordText.contains("Start") }
        #expect(page.archiveLinks.first?.contains("/archive/\(archive.id)/view?token=") == true, "\(page.archiveLinks)")

        // A viewer's token opens no recording: the archive page says so in a sentence.
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let archivePage = try await HeadlessBrowser(url: "\(relay.base)/archive/\(archive.id)/view?token=\(viewerToken)")
        defer { archivePage.close() }
        var problem: String?
        for _ in 0..<100 where problem == nil {
            problem = try await archivePage.evaluate("typeof archiveViewer === 'undefined' ? null : archiveViewer.problem")
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(problem?.contains("needs a moderator's link") == true, "\(String(describing: problem))")
    }

    @Test func aPageWithoutWebCodecsSaysWhy() async throws {
        // WebCodecs exists only in secure contexts: http to a name other than localhost (a viewer opened over the
        // LAN) has none. The name is mapped to loopback inside Chromium, and given to the relay as one of its names.
        let relay = try await RunningRelay { $0.allowedHosts = ["screen.example"] }
        let session = try await relay.createSession()
        let insecure = session.viewerURL.replacingOccurrences(of: "127.0.0.1", with: "screen.example")
        let browser = try await HeadlessBrowser(url: insecure, arguments: ["--host-resolver-rules=MAP screen.example 127.0.0.1"])
        defer { browser.close() }
        let state = try await Self.waitForViewer(browser) { $0.problem != nil }
        #expect(state.problem?.contains("WebCodecs is only available on secure pages") == true, "viewer: \(state)")
        let shown: String = try await browser.evaluate("document.getElementById('problem').hidden ? '' : document.getElementById('problem').textContent")
        #expect(shown.contains("https"))
    }

    @Test func aViewerLinkWithABadTokenSaysTheRelayRefusedIt() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        let forged = session.viewerURL.replacingOccurrences(of: "token=", with: "token=x")
        let browser = try await HeadlessBrowser(url: forged)
        defer { browser.close() }
        let state = try await Self.waitForViewer(browser) { $0.problem != nil }
        #expect(state.problem?.contains("invalidToken") == true, "viewer: \(state)")
    }
}
