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

/// The screenrelay program killed outright while recording, then started again on the same data directory.
@Suite(.watchdog()) struct ArchiveRecoveryTests {
    let screenrelay = ChildProcess.productsDirectory + "/screenrelay"

    /// Starts screenrelay on a free port and returns it with its base URL.
    func startRelay(dataDirectory: String, port: Int = 0) async throws -> (ChildProcess, String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENRELAY_SECRET"] = RunningRelay.secret
        let relay = try ChildProcess(screenrelay, ["--port", "\(port)", "--data-dir", dataDirectory], environment: environment)
        for _ in 0..<200 {
            if let line = relay.errorsSoFar.split(separator: "\n").first(where: { $0.contains("screenrelay listening on port ") }),
                let port = line.split(separator: " ").last {
                return (relay, "http://127.0.0.1:\(port)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        relay.signal(SIGKILL)
        throw TestFailure("screenrelay did not start: \(await relay.wait(timeout: 5).standardError)")
    }

    func call(_ method: String, _ url: String, json: [String: Any]? = nil) async throws -> (Int, Data) {
        let response = try await RelayHTTPClient().send(
            method, url, bearer: RunningRelay.secret, json: try json.map { try JSONSerialization.data(withJSONObject: $0) })
        return (response.status, response.body)
    }

    @Test
    func aRecordingSurvivesSIGKILLAndIsMarkedStoppedOnRestart() async throws {
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (relay, base) = try await startRelay(dataDirectory: directory)
        let session = ArchiveTests.json(try await call("POST", base + "/session").1)
        let sessionId = try #require(session["sessionId"] as? String)
        let token = try #require(session["token"] as? String)
        let frames = try TestMedia.encodedFrames(count: 10)
        let archiveId = Locked<String?>(nil)
        // Publish, start the archive, send the frames once the relay asks for a keyframe, and stay connected.
        let publishing = Task {
            try await RelayClient.connect(url: RelayEndpoint.webSocketURL(server: base), token: token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events)
                let started = ArchiveTests.json(try await call("POST", base + "/archive", json: ["sessionId": sessionId]).1)
                archiveId.withLock { $0 = started["id"] as? String }
                _ = try await events.nextControl(where: { $0 == .requestKeyframe(streamId: stream.streamId) })
                try await link.send(frames, streamId: stream.streamId)
                while try await events.next() != nil {}
            }
        }
        var id: String?
        for _ in 0..<100 {
            try await Task.sleep(for: .milliseconds(100))
            id = archiveId.value
            if let id, (try? JSONSerialization.jsonObject(with: try await call("GET", base + "/archive/\(id)/metadata").1) as? [Any])?.count == 10 { break }
        }
        let recorded = try #require(id)
        relay.signal(SIGKILL)
        #expect(await relay.wait(timeout: 10).status == 128 + SIGKILL)
        _ = await publishing.result

        let (restarted, newBase) = try await startRelay(dataDirectory: directory)
        defer { restarted.endInBackground(signal: SIGTERM, timeout: 10) }
        let archive = ArchiveTests.json(try await call("GET", newBase + "/archive/\(recorded)").1)
        #expect(archive["status"] as? String == "stopped", "\(archive)")
        #expect((archive["reason"] as? String)?.contains("relay stopped while recording") == true)
        let (status, file) = try await call("GET", newBase + "/archive/\(recorded)/download")
        #expect(status == 200)
        let path = directory + "/downloaded.webm"
        try file.write(to: URL(fileURLWithPath: path))
        await #expect(try ArchiveTests.probe(path).frames == 10, "every frame written before the kill plays")
        #expect(try WebMReader(path: path).readAll().compactMap { $0.cue?.metadata.text } == (0..<10).map { "frame \($0)" })
    }
}
