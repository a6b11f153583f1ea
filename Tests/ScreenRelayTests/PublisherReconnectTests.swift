import Crypto
import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenRelay
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenTesting
import ScreenWire
import Testing

/// screenpub publishing to a screenrelay that is killed and started again on the same port.
@Suite(.watchdog()) struct PublisherReconnectTests {
    let screenpub = ChildProcess.productsDirectory + "/screenpub"

    /// Counts media frames at a subscriber until `count` arrived; nil if the relay went away first.
    func framesArrive(_ base: String, token: String, count: Int) async throws -> Int {
        try await RelayClient.connect(url: RelayEndpoint.webSocketURL(server: base), token: token, logger: quietLogger) { link, events in
            var received = 0
            while received < count, let event = try await events.next() {
                switch event {
                case .control(.welcome(_, _, _, let streams, _, _)):
                    if let stream = streams.first { try await link.send(.subscribe(streamId: stream.streamId)) }
                case .control(.streamCreated(let stream)): try await link.send(.subscribe(streamId: stream.streamId))
                case .media: received += 1
                default: continue
                }
            }
            return received
        }
    }

    @Test
    func aKilledRelayThatComesBackGetsThePublisherBack() async throws {
        let recovery = ArchiveRecoveryTests()
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (relay, base) = try await recovery.startRelay(dataDirectory: directory)
        let port = Int(base.split(separator: ":").last!)!
        let session = ArchiveTests.json(try await recovery.call("POST", base + "/session").1)
        let token = try #require(session["token"] as? String)
        let viewerToken = try #require((session["viewerURL"] as? String)?.split(separator: "token=").last.map(String.init))
        let display = try await VirtualDisplay(width: 320, height: 240)
        // 10 fps and a keepalive every 0.2 s: frames flow even on an idle screen.
        let publisher = try ChildProcess(screenpub, [
            "--display", display.name, "--server", base, "--token", token, "--fps", "10", "--keepalive", "0.2", "--duration", "50",
        ])
        defer { publisher.endInBackground(signal: SIGKILL, timeout: 5) }
        #expect(try await framesArrive(base, token: viewerToken, count: 3) == 3)

        relay.signal(SIGKILL)
        #expect(await relay.wait(timeout: 10).status == 128 + SIGKILL)
        try await Task.sleep(for: .seconds(1))
        let (restarted, _) = try await recovery.startRelay(dataDirectory: directory, port: port)
        defer { restarted.endInBackground(signal: SIGTERM, timeout: 10) }
        // The session is known again (restored from the data directory) and the publisher is back. How soon
        // is the backoff's business, tested without a clock in ReconnectStateMachineTests, not a time limit
        // here, which a loaded machine would break.
        #expect(try await framesArrive(base, token: viewerToken, count: 3) == 3)
        #expect(publisher.errorsSoFar.contains("reconnecting in"), "\(publisher.errorsSoFar.suffix(1500))")
    }
}
