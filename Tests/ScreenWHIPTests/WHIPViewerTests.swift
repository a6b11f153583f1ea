import Foundation
import Logging
import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

@testable import ScreenWHIP

/// A WHIP publisher into real Janus, watched by real headless Chromium on the WHIP viewer page
/// (packaging/whip-viewer): each frame carries its number twice, drawn into the picture (10 bits as black and
/// white blocks) and as its metadata ("frame N"); the page pairs the frames it shows with their metadata by RTP
/// timestamp, and the test reads the number back out of the same shown frame's pixels.
@Suite(.watchdog(), .serialized) struct WHIPViewerTests {
    static let width = 320, height = 240

    func sfu() async throws -> JanusSFU {
        do {
            return try await JanusSFU(codec: "vp9")
        } catch let failure as JanusSFU.Failure where failure.cannotStart {
            try Test.cancel("an SFU cannot run here: \(failure.description)")
        }
    }

    /// Bit i of `number` as the block in row i / 5, column i % 5 (white: 1).
    static func draw(_ number: Int, into frame: VideoFrame) {
        TestPattern.fill(frame) { x, y in
            let bit = (y / (height / 2)) * 5 + x / (width / 5)
            return number >> bit & 1 == 1 ? (240, 240, 240) : (15, 15, 15)
        }
    }

    /// Installed in the page: reads the number out of each shown frame's pixels, by its rtpTimestamp.
    static let pixelReader = """
        (() => {
          window.counterSamples = [];
          const video = document.getElementById('video');
          const canvas = document.createElement('canvas');
          canvas.width = \(width); canvas.height = \(height);
          const context = canvas.getContext('2d', { willReadFrequently: true });
          const step = (now, frame) => {
            context.drawImage(video, 0, 0, \(width), \(height));
            let number = 0;
            for (let bit = 0; bit < 10; bit++) {
              const x = (bit % 5) * \(width / 5) + \(width / 10), y = Math.floor(bit / 5) * \(height / 2) + \(height / 4);
              if (context.getImageData(x, y, 1, 1).data[0] > 128) number |= 1 << bit;
            }
            window.counterSamples.push({ rtpTimestamp: frame.rtpTimestamp, number });
            video.requestVideoFrameCallback(step);
          };
          video.requestVideoFrameCallback(step);
          return true;
        })()
        """

    struct Sample: Decodable {
        var rtpTimestamp: UInt32?
        var number: Int
    }

    @Test func chromiumThroughJanusShowsEachShownFramesOwnMetadata() async throws {
        try await sfu().use { sfu in
            let page = try await WHIPViewerPage(sfu: sfu)
            defer { page.close() }
            try await watchFrames(sfu, page)
        }
    }

    func watchFrames(_ sfu: JanusSFU, _ page: WHIPViewerPage) async throws {
        let requests = PictureRequests()
        let publisher = WHIPPublisher(
            endpoint: String(sfu.whipURL.dropFirst("whip+".count)), token: sfu.token, codec: .vp9, pictureRequests: requests,
            logger: Logger(label: "whip-viewer-test"))
        let running = Task { try await publisher.run() }
        defer { running.cancel() }
        #expect(try await eventually(30) { publisher.status.connected }, "\(publisher.status.lastProblem ?? "")\n\(sfu.log.suffix(1500))")
        _ = try await page.browser.evaluate(Self.pixelReader, as: Bool.self)
        let encoder = RealtimeEncoder(configuration: VideoEncoderConfiguration(codec: .vp9, bitrateKbps: 800, framesPerSecond: 10))
        let frame = VideoFrame(width: Self.width, height: Self.height)
        let clock = MonotonicClock()
        // Ten frames a second for 12 s, each a new number: the page shows them as they come.
        for number in 0..<120 {
            Self.draw(number, into: frame)
            frame.captureTime = clock.mediaTime(fromTicks: clock.now())
            frame.wallClock = .now()
            frame.metadata = try FrameMetadata(text: "frame \(number)")
            if requests.takeKeyframe() { encoder.requestKeyframe() }
            try encoder.encode(frame) { try publisher.write($0) }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(1))
        let sent = publisher.status
        let state = try await page.state()
        let shown = try await page.shown()
        let samples: [Sample] = try await page.browser.evaluate("window.counterSamples")
        try publisher.finish()
        _ = try? await running.value

        let numbers = Dictionary(samples.compactMap { sample in sample.rtpTimestamp.map { ($0, sample.number) } }, uniquingKeysWith: { first, _ in first })
        // Every frame the page showed (those before the pairing knew the SFU's offset count as disagreeing).
        var agree = 0, offByOne = 0, worse: [String] = []
        defer { print("WHIP viewer: \(agree) of \(agree + offByOne + worse.count) shown frames agree, \(offByOne) off by one, \(worse.count) other; capture → display median \(state.medianLatencyMs ?? -1) ms") }
        for frame in shown {
            guard let rtp = frame.rtpTimestamp, let drawn = numbers[rtp] else { continue }
            guard let text = frame.metadata, text.hasPrefix("frame "), let sent = Int(text.dropFirst(6)) else {
                worse.append("unpaired (drawn \(drawn))")
                continue
            }
            if sent == drawn { agree += 1 } else if abs(sent - drawn) == 1 { offByOne += 1 } else { worse.append("\(text) drawn \(drawn)") }
        }
        let counted = agree + offByOne + worse.count
        #expect(counted >= 60, "frames shown and read: \(counted); \(state); publisher \(publisher.status)\n\(sfu.log.suffix(1500))")
        #expect(Double(agree) >= 0.95 * Double(max(counted, 1)), "\(agree) of \(counted) agree, \(offByOne) off by one; \(worse.prefix(10))")
        #expect(worse.allSatisfy { $0.hasPrefix("unpaired") }, "a frame paired with metadata more than one frame off: \(worse)")
        // Janus relays the publisher's messages on a channel it labels with the publisher's id.
        #expect(state.dataChannel != "none" && state.messages >= 100 && state.rejectedMessages == 0, "\(state)")
        // Capture → display of the paired frames: positive and under 2 s, at the median and for at least 95 % of
        // them. With every test running at once a frame now and then has measured outside (−205 ms for a first frame,
        // another later in a run): Chromium's expected display time for a frame on a starved machine, or a pairing
        // two frames off while the offset settles; the viewer page does not tell which yet. The pairing itself is
        // held to every frame above.
        let latencies = shown.compactMap(\.captureToDisplayMs)
        let outside = latencies.enumerated().filter { !($0.element > 0 && $0.element < 2000) }
        let median = latencies.sorted().dropFirst(latencies.count / 2).first
        #expect(median.map { $0 > 0 && $0 < 2000 } ?? false, "capture → display median \(String(describing: median)): \(latencies.prefix(20))")
        #expect(
            Double(outside.count) <= 0.05 * Double(latencies.count),
            "capture → display outside 0–2 s for \(outside.count) of \(latencies.count) frames: \(outside.prefix(10).map { "#\($0.offset) \($0.element) ms" })")
        #expect(sent.metadataSent >= 100, "\(sent)\n\(sfu.log.suffix(3000))")
    }
}
