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

    public func close() {
        browser.close()
        server.signal(SIGKILL)
    }
}
