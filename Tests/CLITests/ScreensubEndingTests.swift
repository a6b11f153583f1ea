import Foundation
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// How `screensub` ends when the relay goes away mid-stream: non-zero, with a sentence, what arrived kept.
@Suite(.watchdog()) struct ScreensubEndingTests {
    @Test func theRelayDyingMidStreamEndsScreensubWithStatusOne() async throws {
        let relay = try await RunningRelayProcess([])
        let (credentials, viewerToken) = try await relay.makeSession()
        // A publisher sending a frame every 100 ms (forwarded as they are: screensub --no-decode counts them).
        let publishing = Task {
            try await RelayClient.connect(url: credentials.relayURL, token: credentials.token, logger: .init(label: "publisher")) { link, events in
                _ = try await events.nextControl()
                try await link.send(.publish(name: "screen", properties: .init(codec: .vp9, width: 64, height: 48, estimatedFramesPerSecond: 10, estimatedCaptureDelayMilliseconds: 0)))
                _ = try await events.nextControl(where: { if case .published = $0 { true } else { false } })
                let payload = [UInt8](repeating: 7, count: 200)
                var sequence: UInt64 = 0
                while !Task.isCancelled {
                    let header = MediaFrameHeader(
                        streamID: 1, sequence: sequence, flags: sequence % 20 == 0 ? .keyframe : [], codec: .vp9, width: 64, height: 48,
                        captureTime: MediaTime(value: Int64(sequence), timescale: 10), wallClockMilliseconds: 1_795_000_000_000,
                        metadata: .empty, payloadLength: payload.count)
                    try await link.send(header, payload: payload)
                    sequence += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        defer { publishing.cancel() }
        let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("viewer-\(UUID().uuidString.prefix(8)).token").path
        try viewerToken.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: tokenFile) }
        let viewer = try ChildProcess(RunningShare.screensub, ["--server", "http://127.0.0.1:\(relay.port)", "--token-file", tokenFile, "--no-decode", "--print-metadata"])
        defer { viewer.endInBackground(signal: SIGKILL) }
        #expect(try await eventually(30) { viewer.outputSoFar.split(separator: "\n").count >= 3 }, "\(viewer.outputSoFar) \(viewer.errorsSoFar)")

        relay.process.signal(SIGKILL)
        let outcome = await viewer.wait(timeout: 30)
        #expect(outcome.status == 1, "\(outcome.status): \(outcome.standardError)")
        #expect(outcome.standardError.contains("before the stream ended"), "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("frames received"), "the summary is printed: \(outcome.standardOutput)")
    }
}
