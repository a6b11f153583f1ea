import Foundation

/// The WHIP viewer page (`packaging/whip-viewer/`) served on 127.0.0.1 by Python's http.server and opened in a
/// real headless Chromium against a ``JanusSFU``: what a viewer of a share published into Janus sees. The page
/// reads Janus's HTTP API across origins (Janus answers CORS).
public final class WHIPViewerPage: Sendable {
    public let browser: HeadlessBrowser
    private let server: ChildProcess

    public static let directory = URL(fileURLWithPath: TestFixtures.directory + "/../../packaging/whip-viewer").standardized.path

    public init(sfu: JanusSFU) async throws {
        let port = try freeLoopbackPort()
        let server = try ChildProcess("/usr/bin/python3", ["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", Self.directory, String(port)])
        self.server = server
        guard try await eventually(10, { server.errorsSoFar.contains("Serving HTTP") || server.outputSoFar.contains("Serving HTTP") }) else {
            server.signal(SIGKILL)
            throw HeadlessBrowser.Failure(description: "the page server did not start: \(server.errorsSoFar)")
        }
        do {
            browser = try await HeadlessBrowser(
                url: "http://127.0.0.1:\(port)/index.html?janus=\(sfu.janusURL)&room=\(sfu.room)",
                arguments: [
                    // Sound plays without a click, and host candidates are addresses (Janus resolves no mDNS names).
                    "--autoplay-policy=no-user-gesture-required", "--disable-features=WebRtcHideLocalIpsWithMdns",
                ])
        } catch {
            server.signal(SIGKILL)
            throw error
        }
        // Chromium has a page target before the page has loaded; a script a test installs needs its video element.
        let browser = self.browser
        guard try await eventually(60, { (try? await browser.evaluate("document.getElementById('video') !== null", as: Bool.self)) == true }) else {
            let report = await browser.loadReport()
            browser.close()
            server.signal(SIGKILL)
            throw HeadlessBrowser.Failure(description: "the WHIP viewer page had no video element within 60 s: \(report)")
        }
    }

    /// One frame the page showed: its RTP timestamp, the metadata paired with it, capture → display.
    public struct Shown: Decodable, Sendable {
        public var rtpTimestamp: UInt32?
        public var metadata: String?
        public var captureToDisplayMs: Double?
    }

    /// What the page holds in `window.whipViewer`.
    public struct State: Decodable, Sendable {
        public var framesShown: Int
        public var framesPaired: Int
        public var messages: Int
        /// Messages that came after their frame was shown (still on screen).
        public var lateMessages: Int
        public var rejectedMessages: Int
        public var dataChannel: String
        public var audioTracks: Int
        public var peakLevel: Double
        public var medianLatencyMs: Double?
        public var status: String
    }

    public func state() async throws -> State {
        try await browser.evaluate(
            "(({framesShown, framesPaired, messages, lateMessages, rejectedMessages, dataChannel, audioTracks, peakLevel, medianLatencyMs, status}) => ({framesShown, framesPaired, messages, lateMessages, rejectedMessages, dataChannel, audioTracks, peakLevel, medianLatencyMs, status}))(window.whipViewer)")
    }

    public func shown() async throws -> [Shown] { try await browser.evaluate("window.whipViewer.shown") }

    /// Starts noting, in the page, when each white flash is shown and each beep heard (``avProbe()`` reads them).
    public func startAVProbe() async throws { _ = try await browser.evaluate(Self.avProbeScript, as: Bool.self) }

    /// When the page showed each flash (a frame's mean brightness crossing up, at its expected display time) and heard
    /// each beep (the received track's level crossing up, at its output time), wall-clock milliseconds.
    public struct AVProbe: Decodable, Sendable {
        public var flashes: [Double]
        public var beeps: [Double]

        /// Audio − video of each flash and the beep nearest to it (within 500 ms), milliseconds.
        public var offsets: [Double] {
            flashes.compactMap { flash -> Double? in
                guard let beep = beeps.min(by: { abs($0 - flash) < abs($1 - flash) }), abs(beep - flash) < 500 else { return nil }
                return beep - flash
            }
        }
    }

    public func avProbe() async throws -> AVProbe { try await browser.evaluate("window.avProbe") }

    static let avProbeScript = """
        (() => {
          const probe = { flashes: [], beeps: [] };
          window.avProbe = probe;
          const video = document.getElementById('video');
          const canvas = document.createElement('canvas');
          canvas.width = 16; canvas.height = 9;
          const context = canvas.getContext('2d', { willReadFrequently: true });
          let bright = false;
          const step = (now, frame) => {
            context.drawImage(video, 0, 0, 16, 9);
            const data = context.getImageData(0, 0, 16, 9).data;
            let sum = 0;
            for (let i = 0; i < data.length; i += 4) sum += data[i];
            const isBright = sum / (data.length / 4) > 200;
            if (isBright && !bright) probe.flashes.push(performance.timeOrigin + (frame.expectedDisplayTime || now));
            bright = isBright;
            video.requestVideoFrameCallback(step);
          };
          video.requestVideoFrameCallback(step);
          const audio = new AudioContext();
          const analyser = audio.createAnalyser();
          analyser.fftSize = 256;
          audio.createMediaStreamSource(video.srcObject).connect(analyser);
          const samples = new Float32Array(analyser.fftSize);
          let loud = false;
          setInterval(() => {
            if (audio.state === 'suspended') audio.resume();
            analyser.getFloatTimeDomainData(samples);
            let sum = 0;
            for (const s of samples) sum += s * s;
            const isLoud = Math.sqrt(sum / samples.length) > 0.05;
            if (isLoud && !loud) {
              const stamp = audio.getOutputTimestamp();
              const heard = stamp.performanceTime + (audio.currentTime - stamp.contextTime) * 1000;
              probe.beeps.push(performance.timeOrigin + heard);
            }
            loud = isLoud;
          }, 2);
          return true;
        })()
        """

    public func close() {
        browser.close()
        server.signal(SIGKILL)
    }
}
