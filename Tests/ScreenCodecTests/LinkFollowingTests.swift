import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

/// A target that follows the link keeps each frame within what the link carries in its delay, however long the
/// gap before it. The libraries' own budget for a frame is the target times that gap (a screen that changes once
/// a second is coded at 1 fps), so at a rate that is merely configured, a new page of text after a second's gap
/// may take a second of the link.
@Suite(.watchdog()) struct LinkFollowingTests {
    /// The largest frame, once the rate control has settled (16 pages), of new pages of text, one a second, at
    /// 800 kbit/s.
    /// Following the link, the encoder is set up as a live share's is (``VideoEncoderConfiguration/followsNetwork``).
    private func largestFrame(of pages: [VideoFrame], codec: VideoCodec, layers: Int, followingTheLink: Bool) throws -> Int {
        let encoder = RealtimeEncoder(configuration: .init(
            codec: codec, bitrateKbps: 1500, framesPerSecond: 5, temporalLayers: layers, followsNetwork: followingTheLink))
        if followingTheLink { try encoder.setTargetBitrate(kbps: 800) } else { try encoder.setRate(targetKbps: 800) }
        var largest = 0
        for (index, page) in pages.enumerated() {
            page.markAllChanged()
            page.captureTime = MediaTime(value: Int64(index), timescale: 1)
            let sink = CollectingSink()
            try encoder.encode(page) { try sink.write($0) }
            if index >= 16 { largest = max(largest, sink.frames.map(\.payload.count).max() ?? 0) }
        }
        return largest
    }

    /// Twenty-eight pages of text (960×540), drawn on a virtual display and read back.
    static func textPages() async throws -> [VideoFrame] {
        let (width, height) = (960, 540)
        let display = try await VirtualDisplay(width: width, height: height)
        let painter = try XPainter(displayName: display.name)
        let scene = TextScene(content: .pageflip, width: width, height: height)
        let window = painter.createWindow(PixelRect(x: 0, y: 0, width: width, height: height), color: scene.background)
        return try (0..<28).map { step in
            scene.drawWhole(painter, window, step: step)
            painter.sync()
            let page = VideoFrame(width: width, height: height)
            try painter.read(window: window, PixelRect(x: 0, y: 0, width: width, height: height), into: page)
            return page
        }
    }

    @Test(arguments: [(VideoCodec.av1, 1), (.av1, 3), (.vp9, 1), (.vp9, 3)])
    func aNewPageOfTextFitsTheLinksDelay(codec: VideoCodec, layers: Int) async throws {
        let pages = try await Self.textPages()
        let linkDelayBytes = 800 * RateControl.linkFollowingBufferMilliseconds / 8
        let following = try largestFrame(of: pages, codec: codec, layers: layers, followingTheLink: true)
        let configured = try largestFrame(of: pages, codec: codec, layers: layers, followingTheLink: false)
        #expect(following <= linkDelayBytes * 11 / 10, "the largest frame is \(following) bytes; the link carries \(linkDelayBytes) in its delay")
        #expect(configured > following * 5 / 4, "at the configured rate the frames are \(configured) bytes at most: the cap is not what keeps them small")
    }

    /// The link narrows from 2000 to 300 kbit/s under pages of text, one every half second: the rate control's
    /// model, learnt at the wide rate, would code the next pages several times larger than the narrow link
    /// carries in its delay; the quantizer floor (raised after each frame that came out too large) brings them
    /// within it after a few pages, and lowers it again once the link is wide.
    @Test(arguments: [VideoCodec.av1, .vp9])
    func pagesFitANarrowedLinkWithinThreePages(codec: VideoCodec) async throws {
        let pages = try await Self.textPages()
        let encoder = RealtimeEncoder(configuration: .init(
            codec: codec, bitrateKbps: 2000, framesPerSecond: 5, temporalLayers: 3, followsNetwork: true))
        var time = 0
        func code(_ page: VideoFrame) throws -> Int {
            page.markAllChanged()
            page.captureTime = MediaTime(value: Int64(time), timescale: 1000)
            time += 500
            let sink = CollectingSink()
            try encoder.encode(page) { try sink.write($0) }
            return sink.frames.map(\.payload.count).reduce(0, +)
        }
        try encoder.setTargetBitrate(kbps: 2000)
        let wide = try pages[0..<12].map(code)
        try encoder.setTargetBitrate(kbps: 300)
        let narrow = try pages[12..<24].map(code)
        let narrowDelayBytes = 300 * RateControl.linkFollowingBufferMilliseconds / 8
        #expect(narrow.dropFirst(3).allSatisfy { $0 <= narrowDelayBytes * 5 / 4 }, "pages at 2000 kbit/s: \(wide); after the drop to 300: \(narrow); the narrow link carries \(narrowDelayBytes) bytes in its delay")
        try encoder.setTargetBitrate(kbps: 2000)
        let wideAgain = try (pages[24..<28] + pages[0..<8]).map(code)
        // Four frames in a row are one of each layer's places (0, 2, 1, 2): compared whole, as the layers differ.
        let (wideBytes, narrowBytes) = (wideAgain.suffix(4).reduce(0, +), narrow.suffix(4).reduce(0, +))
        #expect(wideBytes > narrowBytes * 3 / 2, "back at 2000 kbit/s the pages are coded finer again: \(wideAgain) after \(narrow)")
    }
}
