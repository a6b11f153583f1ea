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

/// Archives: a real relay with a data directory, real VP9 frames, files checked with ffprobe.
@Suite(.watchdog()) struct ArchiveTests {
    static func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("archives-\(UUID().uuidString)").path
    }

    static func json(_ data: Data) -> [String: Any] { (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:] }

    /// ffprobe's frame count and duration of a WebM.
    static func probe(_ path: String) async throws -> (frames: Int, duration: Double) {
        let outcome = try await ChildProcess.run("/usr/bin/ffprobe", [
            "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames:format=duration",
            "-of", "default=nw=1", path,
        ])
        var frames = -1, duration = -1.0
        for line in outcome.standardOutput.split(separator: "\n") {
            if line.hasPrefix("nb_read_frames=") { frames = Int(line.dropFirst(15)) ?? -1 }
            if line.hasPrefix("duration=") { duration = Double(line.dropFirst(9)) ?? -1 }
        }
        return (frames, duration)
    }

    /// Publishes over the in-process transport and sends `frames` once the relay asks for a keyframe (the
    /// recording started), then keeps the connection open until `until` says so.
    static func publish(
        _ relay: RunningRelay, token: String, frames: [CollectedFrame], afterKeyframeRequest: Bool = true,
        started: Locked<UInt32?>, until done: Locked<Bool>
    ) -> Task<Void, any Error> {
        Task {
            try await RelayClient.connect(transport: relay.server.inProcessTransport, token: token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                let stream = try await link.publishTestStream(events, codec: frames.first?.codec ?? .vp9)
                started.withLock { $0 = stream.streamId }
                if afterKeyframeRequest { _ = try await events.nextControl(where: { $0 == .requestKeyframe(streamId: stream.streamId) }) }
                try await link.send(frames, streamId: stream.streamId)
                while !done.value { try await Task.sleep(for: .milliseconds(20)) }
            }
        }
    }

    @Test(arguments: [VideoCodec.vp9, .av1, .h264])
    func anArchiveIsRecordedListedDownloadedAndCarriesTheMetadata(codec: VideoCodec) async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try await RunningRelay(dataDirectory: directory)
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 20, codec: codec)

        // A subscriber sees the recording indicator come and go.
        let events = Task {
            try await RelayClient.connect(url: relay.webSocketURL, token: viewerToken, logger: quietLogger) { _, events in
                var seen: [String] = []
                while seen.count < 2, let message = try await events.nextControl() {
                    if case .archiveStarted(let id, let name) = message { seen.append("started \(id) \(name)") }
                    if case .archiveStopped(let id, let status, _) = message { seen.append("stopped \(id) \(status)") }
                }
                return seen
            }
        }
        let streamId = Locked<UInt32?>(nil), done = Locked(false)
        let publisher = Self.publish(relay, token: session.token, frames: frames, started: streamId, until: done)
        defer { done.withLock { $0 = true } }
        while streamId.value == nil { try await Task.sleep(for: .milliseconds(10)) }

        let (startStatus, startBody) = try await relay.post("/archive", json: ["sessionId": session.sessionId, "name": "standup"])
        #expect(startStatus == 200, "\(String(decoding: startBody, as: UTF8.self))")
        let id = try #require(Self.json(startBody)["id"] as? String)
        #expect(Self.json(startBody)["status"] as? String == "started")
        #expect(try await relay.post("/archive", json: ["sessionId": session.sessionId]).0 == 409, "one recording per session at a time")
        // Someone joining during the recording is told too.
        let lateToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let late = try await RelayClient.connect(url: relay.webSocketURL, token: lateToken, logger: quietLogger) { _, events in
            var seen: [ControlMessage] = []
            while let message = try await events.nextControl() {
                seen.append(message)
                if case .archiveStarted = message { break }
            }
            return seen
        }
        #expect(late.last == .archiveStarted(archiveId: id, name: "standup"), "the late joiner was sent \(late) and then the connection ended")

        // All frames written (the recorder's queue drains fast; poll the metadata until it has them all).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            let (status, body) = try await relay.request("GET", "/archive/\(id)/metadata")
            if status == 200, ((try? JSONSerialization.jsonObject(with: body)) as? [Any])?.count == 20 { break }
        }
        let (stopStatus, stopBody) = try await relay.post("/archive/\(id)/stop")
        #expect(stopStatus == 200)
        let archive = Self.json(stopBody)
        #expect(archive["status"] as? String == "available", "\(archive)")
        #expect(archive["name"] as? String == "standup")
        #expect(archive["sessionId"] as? String == session.sessionId)
        #expect(archive["resolution"] as? String == "320x240")
        #expect(archive["streams"] as? Int == 1)
        #expect(abs((archive["duration"] as? Double ?? 0) - 3.8) < 0.01)
        #expect((archive["createdAt"] as? String)?.hasSuffix("Z") == true)

        let (listStatus, listBody) = try await relay.request("GET", "/archive?sessionId=\(session.sessionId)")
        #expect(listStatus == 200)
        #expect((Self.json(listBody)["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
        #expect(Self.json(try await relay.request("GET", "/archive/\(id)").1)["status"] as? String == "available")

        let (downloadStatus, file) = try await relay.request("GET", "/archive/\(id)/download")
        #expect(downloadStatus == 200)
        #expect(file.count == archive["size"] as? Int)
        #expect(SHA256.hash(data: file).map { String(format: "%02x", $0) }.joined() == archive["sha256"] as? String)
        // H.264 is kept in Matroska (WebM cannot carry it), named and served as such.
        let container = RecordingContainer(for: codec)
        #expect(FileManager.default.fileExists(atPath: directory + "/archives/\(id)/stream-\(streamId.value ?? 0).\(container.fileExtension)"))
        let path = Self.temporaryDirectory() + "." + container.fileExtension
        try file.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let probed = try await Self.probe(path)
        #expect(probed.frames == 20)
        #expect(abs(probed.duration - 4.0) < 0.25, "ffprobe duration \(probed.duration)")
        // The cues are what the publisher sent, frame by frame.
        let cues = try JSONSerialization.jsonObject(with: try await relay.request("GET", "/archive/\(id)/metadata").1) as? [[String: Any]] ?? []
        #expect(cues.map { $0["metadata"] as? String } == (0..<20).map { "frame \($0)" })
        #expect(cues.map { $0["captureTime"] as? String } == frames.map { $0.captureTime.description })
        let reader = try WebMReader(path: path)
        #expect(reader.codec == codec)
        let recorded = try reader.readAll()
        #expect(recorded.map(\.payload) == frames.map(\.payload), "no re-encoding")
        let decoder = try makeVideoDecoder(for: codec)
        var decoded = 0
        for frame in recorded {
            try frame.payload.withUnsafeBytes { payload in
                try decoder.decode(payload) { picture in
                    decoded += 1
                    #expect(TestPattern.difference(picture, x: 240, y: 180, TestPattern.quadrantColors[3]) <= 12)
                }
            }
        }
        #expect(decoded == 20)

        // A byte range, as players ask when they seek.
        let partial = try await RelayHTTPClient().send(
            "GET", relay.base + "/archive/\(id)/download", bearer: RunningRelay.secret, headers: [("Range", "bytes=10-19")])
        #expect(partial.status == 206)
        #expect(partial.body == file[10..<20])
        #expect(partial.header("Content-Type") == container.mediaType)
        #expect(partial.header("Content-Disposition")?.contains("standup-0.\(container.fileExtension)") == true, "\(partial.headers)")

        #expect(try await events.value == ["started \(id) standup", "stopped \(id) available"])
        #expect(try await relay.request("DELETE", "/archive/\(id)").0 == 204)
        #expect(try await relay.request("GET", "/archive/\(id)").0 == 404)
        #expect(!FileManager.default.fileExists(atPath: directory + "/archives/\(id)"))
        done.withLock { $0 = true }
        try await publisher.value
    }

    @Test func archiveCallsNeedTheSecretOrAModeratorOfTheSession() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try await RunningRelay(dataDirectory: directory)
        let session = try await relay.createSession()
        let other = try await relay.createSession()
        let subscriber = try await relay.token(session: session.sessionId, role: .subscriber)
        let publisher = try await relay.token(session: session.sessionId, role: .publisher)
        let moderator = try await relay.token(session: session.sessionId, role: .moderator)
        let otherModerator = try await relay.token(session: other.sessionId, role: .moderator)
        let start: [String: Any] = ["sessionId": session.sessionId]
        #expect(try await relay.post("/archive", json: start, secret: nil).0 == 401)
        #expect(try await relay.post("/archive", json: start, secret: "forged.token.here").0 == 401)
        #expect(try await relay.post("/archive", json: start, secret: subscriber).0 == 403)
        #expect(try await relay.post("/archive", json: start, secret: publisher).0 == 403)
        #expect(try await relay.post("/archive", json: start, secret: otherModerator).0 == 403)
        #expect(try await relay.request("GET", "/archive", secret: nil).0 == 401)
        let (status, body) = try await relay.post("/archive", json: start, secret: moderator)
        #expect(status == 200)
        let id = try #require(Self.json(body)["id"] as? String)
        #expect(try await relay.request("GET", "/archive/\(id)", secret: otherModerator).0 == 404)
        #expect(try await relay.request("GET", "/archive/\(id)/download", secret: subscriber).0 == 403)
        #expect(try await relay.request("GET", "/archive?sessionId=\(session.sessionId)", secret: otherModerator).0 == 403)
        // A moderator lists only its session's archives; the token also works as ?token= (for players).
        let (listStatus, list) = try await relay.request("GET", "/archive?token=\(moderator)", secret: nil)
        #expect(listStatus == 200)
        #expect((Self.json(list)["items"] as? [[String: Any]])?.count == 1)
        #expect(try await relay.post("/archive/\(id)/stop", secret: moderator).0 == 200)
    }

    @Test func aRelayWithoutADataDirectorySaysSo() async throws {
        let relay = try await RunningRelay()
        let session = try await relay.createSession()
        #expect(try await relay.post("/archive", json: ["sessionId": session.sessionId]).0 == 503)
    }

    @Test
    func aWriteFailureFailsTheArchiveAndTheRelayKeepsRelaying() async throws {
        // The archives folder cannot be created: a file is in its place (root ignores permissions, not this).
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: directory + "/archives", contents: Data("not a directory".utf8)))
        let relay = try await RunningRelay(dataDirectory: directory)
        let session = try await relay.createSession()
        let viewerToken = try await relay.token(session: session.sessionId, role: .subscriber)
        let frames = try TestMedia.encodedFrames(count: 5)
        let streamId = Locked<UInt32?>(nil), done = Locked(false)
        defer { done.withLock { $0 = true } }
        let (status, body) = try await relay.post("/archive", json: ["sessionId": session.sessionId])
        #expect(status == 200)
        #expect(Self.json(body)["status"] as? String == "failed")
        #expect((Self.json(body)["reason"] as? String)?.contains("cannot create the archive folder") == true, "\(Self.json(body))")
        // The session is still relayed: a subscriber gets every frame.
        let received = Task {
            try await RelayClient.connect(url: relay.webSocketURL, token: viewerToken, logger: quietLogger) { link, events in
                var count = 0
                while count < 5, let event = try await events.next() {
                    if case .control(.streamCreated(let stream)) = event { try await link.send(.subscribe(streamId: stream.streamId)) }
                    if case .media = event { count += 1 }
                }
                return count
            }
        }
        try await relay.waitForConnections(1)
        let publisher = Self.publish(relay, token: session.token, frames: frames, started: streamId, until: done)
        #expect(try await received.value == 5)
        done.withLock { $0 = true }
        try await publisher.value
    }

    @Test
    func anArchiveStopsByItselfWhenThePublisherHasBeenGoneForTheGracePeriod() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try await RunningRelay(dataDirectory: directory, archiveGraceSeconds: 0.5)
        let session = try await relay.createSession()
        let streamId = Locked<UInt32?>(nil), done = Locked(false)
        let publisher = Self.publish(relay, token: session.token, frames: try TestMedia.encodedFrames(count: 5), started: streamId, until: done)
        while streamId.value == nil { try await Task.sleep(for: .milliseconds(10)) }
        let id = try #require(Self.json(try await relay.post("/archive", json: ["sessionId": session.sessionId]).1)["id"] as? String)
        try await Task.sleep(for: .milliseconds(300))
        done.withLock { $0 = true }
        try await publisher.value
        var status = ""
        for _ in 0..<50 where status != "available" {
            try await Task.sleep(for: .milliseconds(100))
            status = Self.json(try await relay.request("GET", "/archive/\(id)").1)["status"] as? String ?? ""
        }
        #expect(status == "available")
        #expect(Self.json(try await relay.request("GET", "/archive/\(id)").1)["reason"] as? String == "the session had no stream for the grace period")
    }
}

/// An archive of a stream with sound carries its Opus track beside VP9 and the metadata track, in place.
@Suite(.watchdog()) struct ArchiveSoundTests {
    @Test
    func anArchiveCarriesTheStreamsOpusTrack() async throws {
        let directory = ArchiveTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = try await RunningRelay(dataDirectory: directory)
        let session = try await relay.createSession()
        let frames = try TestMedia.encodedFrames(count: 20)
        // 440 Hz for as long as the pictures last, in 20 ms Opus frames on the pictures' clock.
        let encoder = try OpusAudioEncoder()
        let first = frames[0].captureTime.converted(to: MediaTime.nanosecondTimescale).value
        var sounds: [(header: AudioFrameHeader, payload: [UInt8])] = []
        for index in 0..<190 {
            let samples = (0..<960).flatMap { sample -> [Float] in
                let value = Float(0.4 * sin(2 * Double.pi * 440 * Double(index * 960 + sample) / 48_000))
                return [value, value]
            }
            try samples.withUnsafeBufferPointer { buffer in
                try encoder.encode(buffer) { packet, silence in
                    let header = AudioFrameHeader(
                        streamID: 0, sequence: UInt64(index), codec: .opus, channels: 2, samples: 960,
                        captureTime: MediaTime(value: first + Int64(index) * 20_000_000, timescale: MediaTime.nanosecondTimescale),
                        wallClockMilliseconds: 0, isSilence: silence, payloadLength: packet.count)
                    sounds.append((header, Array(packet)))
                }
            }
        }
        let done = Locked(false), started = Locked<UInt32?>(nil)
        defer { done.withLock { $0 = true } }
        let sent = sounds
        let publisher = Task {
            try await RelayClient.connect(transport: relay.server.inProcessTransport, token: session.token, logger: quietLogger) { link, events in
                _ = try await events.nextControl()
                var properties = TestMedia.properties
                properties.audio = AudioProperties(channels: 2)
                try await link.send(.publish(name: "screen", properties: properties))
                guard case .published(let stream)? = try await events.nextControl(where: { if case .published = $0 { true } else { false } }) else {
                    throw TestFailure("not published")
                }
                started.withLock { $0 = stream.streamId }
                _ = try await events.nextControl(where: { $0 == .requestKeyframe(streamId: stream.streamId) })
                // Pictures and sound interleaved by capture time, as a publisher sends them.
                var audio = sent.makeIterator()
                var next = audio.next()
                for (index, frame) in frames.enumerated() {
                    while let sound = next, sound.header.captureTime <= frame.captureTime {
                        var header = sound.header
                        header.streamID = stream.streamId
                        try await link.send(header, payload: sound.payload)
                        next = audio.next()
                    }
                    try await link.send(TestMedia.header(frame, streamId: stream.streamId, sequence: UInt64(index)), payload: frame.payload)
                }
                while !done.value { try await Task.sleep(for: .milliseconds(20)) }
            }
        }
        while started.value == nil { try await Task.sleep(for: .milliseconds(10)) }
        let (startStatus, startBody) = try await relay.post("/archive", json: ["sessionId": session.sessionId, "name": "with sound"])
        #expect(startStatus == 200)
        let id = try #require(ArchiveTests.json(startBody)["id"] as? String)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            let (status, body) = try await relay.request("GET", "/archive/\(id)/metadata")
            if status == 200, ((try? JSONSerialization.jsonObject(with: body)) as? [Any])?.count == 20 { break }
        }
        #expect(try await relay.post("/archive/\(id)/stop").0 == 200)
        let (downloadStatus, file) = try await relay.request("GET", "/archive/\(id)/download")
        #expect(downloadStatus == 200)
        let path = ArchiveTests.temporaryDirectory() + ".webm"
        try file.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let streams = try await ChildProcess.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,channels", "-of", "csv=p=0", path])
        #expect(streams.standardOutput.contains("vp9") && streams.standardOutput.contains("opus,2"), "\(streams.standardOutput)")
        // ffmpeg decodes the sound: the tone, as long as the pictures (3.8 s, less what came before the first).
        let samples = try await RecordedSound.monoSamples(of: path)
        #expect(abs(Double(samples.count) / 48_000 - 3.8) < 0.1, "\(Double(samples.count) / 48_000) s of sound")
        let middle = Array(samples.dropFirst(48_000).prefix(48_000))
        var crossings = 0
        for index in 1..<middle.count where middle[index - 1] < 0 && middle[index] >= 0 { crossings += 1 }
        #expect(abs(crossings - 440) <= 9, "\(crossings) Hz")
        done.withLock { $0 = true }
        try await publisher.value
    }
}
