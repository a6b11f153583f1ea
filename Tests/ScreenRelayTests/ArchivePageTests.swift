import Foundation
import ScreenMedia
import ScreenSession
import ScreenTransport
import ScreenTesting
import Testing

/// The archive page in a real headless Chromium: the recording plays, and the metadata shown is the frame's on screen.
@Suite(.watchdog()) struct ArchivePageTests {
    /// A relay with an archive of 20 frames of `codec` (recorded, stopped, available) in `directory`, and a moderator
    /// token for its page; the relay lives as long as the caller holds it.
    static func archive(codec: VideoCodec, in directory: String) async throws -> (relay: RunningRelay, id: String, moderator: String) {
        let relay = try await RunningRelay(dataDirectory: directory)
        let session = try await relay.createSession()
        let streamId = Locked<UInt32?>(nil), done = Locked(false)
        defer { done.withLock { $0 = true } }
        let publisher = ArchiveTests.publish(
            relay, token: session.token, frames: try TestMedia.encodedFrames(count: 20, codec: codec), started: streamId, until: done)
        while streamId.value == nil { try await Task.sleep(for: .milliseconds(10)) }
        let id = try #require(ArchiveTests.json(try await relay.post("/archive", json: ["sessionId": session.sessionId, "name": "demo"]).1)["id"] as? String)
        for _ in 0..<100 {
            try await Task.sleep(for: .milliseconds(50))
            if (try? JSONSerialization.jsonObject(with: try await relay.request("GET", "/archive/\(id)/metadata").1) as? [Any])?.count == 20 { break }
        }
        #expect(ArchiveTests.json(try await relay.post("/archive/\(id)/stop").1)["status"] as? String == "available")
        done.withLock { $0 = true }
        try await publisher.value
        let moderator = try await relay.token(session: session.sessionId, role: .moderator)
        return (relay, id, moderator)
    }

    /// VP9 in WebM and H.264 in Matroska, which the page's `<video>` plays as the relay serves it (`video/x-matroska`).
    @Test(arguments: [VideoCodec.vp9, .h264])
    func theArchivePagePlaysTheRecordingWithItsMetadataInSync(codec: VideoCodec) async throws {
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (relay, id, moderator) = try await Self.archive(codec: codec, in: directory)
        let browser = try await HeadlessBrowser(url: "\(relay.base)/archive/\(id)/view?token=\(moderator)")
        defer { browser.close() }
        struct PageState: Decodable { var status: String; var cues: Int; var shownMetadata: String?; var problem: String? }
        func state() async throws -> PageState? {
            try await browser.evaluate("typeof archiveViewer === 'undefined' ? null : archiveViewer")
        }
        func waitFor(_ condition: (PageState) -> Bool) async throws -> PageState? {
            var current = try await state()
            for _ in 0..<100 where current.map(condition) != true {
                try await Task.sleep(for: .milliseconds(100))
                current = try await state()
            }
            return current
        }
        let loaded = try await waitFor { $0.status.contains("frames") || $0.problem != nil }
        #expect(loaded?.cues == 20, "\(String(describing: loaded))")
        #expect(loaded?.problem == nil)
        #expect(loaded?.shownMetadata == "frame 0")
        // Seeking shows the metadata of the frame on screen: frame N was captured at N/5 s.
        for (time, expected) in [(2.0, "frame 10"), (0.4, "frame 2"), (3.8, "frame 19")] {
            let _: Bool = try await browser.evaluate("(document.getElementById('recording').currentTime = \(time), true)")
            let shown = try await waitFor { $0.shownMetadata == expected }
            #expect(shown?.shownMetadata == expected, "at \(time) s")
        }
        let text: String = try await browser.evaluate("document.getElementById('metadata').textContent")
        #expect(text == "frame 19")
    }
}
