import Foundation
import Logging
import ScreenCaptureX11
import ScreenCodec
import ScreenRecording
import ScreenMedia
import ScreenSession
import ScreenShare
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// Whole shares, as screenpub runs them, with the test pattern instead of a display: no X server.
@Suite(.watchdog()) struct ShareTests {
    @Test func aShareSendsKeyframeFirstWithMetadataAndStopFinishesEveryDestination() async throws {
        var destinations: (a: CollectingDestination, b: CollectingDestination)?
        let ending = try await RunningShare.with(.testing(to: ["collect:a", "collect:b"])) { running in
            let (a, b) = (try #require(running.collected["collect:a"]), try #require(running.collected["collect:b"]))
            destinations = (a, b)
            #expect(try await eventually(30) { a.sink.frames.count >= 3 && b.sink.frames.count >= 3 })
            #expect(running.share.handle(.stop).state == "stopping")
        }
        #expect(ending == nil)
        let (a, b) = try #require(destinations)
        #expect(a.sink.isFinished && b.sink.isFinished)
        let frames = a.sink.frames
        #expect(frames.first?.isKeyframe == true)
        #expect(frames.allSatisfy { $0.metadata.count == 24 })  // the ISO-8601 capture time
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.captureTime < $1.captureTime })
    }

    @Test func pauseStopsFramesAndTellsDestinationsAndResumeStartsWithAKeyframe() async throws {
        let ending = try await RunningShare.with(.testing(to: ["collect:a"])) { running in
            let a = try #require(running.collected["collect:a"])
            #expect(try await eventually(30) { a.sink.frames.count >= 2 })
            #expect(running.share.handle(.pause).state == "paused")
            #expect(a.announced.last == StreamAnnouncement(hasVideo: false, framesPerSecond: 20, hasAudio: false))
            try await Task.sleep(for: .milliseconds(200))  // a frame being encoded when pausing may still arrive
            let whilePaused = a.sink.frames.count
            try await Task.sleep(for: .milliseconds(600))
            #expect(a.sink.frames.count == whilePaused)
            #expect(running.share.totals.pausedTicks > 0)
            // Pausing twice changes nothing.
            #expect(running.share.handle(.pause).state == "paused")
            #expect(a.announced.count == 1)

            #expect(running.share.handle(.resume).state == "sharing")
            #expect(a.announced.last == StreamAnnouncement(hasVideo: true, framesPerSecond: 20, hasAudio: false))
            #expect(try await eventually(30) { a.sink.frames.count > whilePaused })
            #expect(a.sink.frames[whilePaused].isKeyframe)
        }
        #expect(ending == nil)
    }

    @Test func reloadRestartsTheCaptureWithNewSettingsOnTheSameDestinations() async throws {
        var changed = ShareSettings.testing(to: ["collect:a"], fps: 10)
        changed.bitrate = 800
        changed.codec = .vp8  // only at the next start: the running stream keeps what auto chose at 20 fps, VP9
        let reread = changed
        let (sources, made) = testPatternSources()
        let ending = try await RunningShare.with(
            .testing(to: ["collect:a"]), sources: sources, reread: { Result { () throws(ShareError) in try ShareConfiguration(reread, environment: [:], destinationKinds: testKinds) } }) { running in
            let a = try #require(running.collected["collect:a"])
            #expect(try await eventually(30) { a.sink.frames.count >= 2 })

            let beforeReload = a.sink.frames.count
            running.share.reload(.success(try ShareConfiguration(changed, environment: [:], destinationKinds: testKinds)))
            #expect(try await eventually(30) { made.count == 2 })
            let status = running.share.status
            #expect(status.framesPerSecond == 10 && status.bitrateKbps == 800 && status.codec == "vp9")
            #expect(a.announced.last == StreamAnnouncement(hasVideo: true, framesPerSecond: 10, hasAudio: false))
            let before = a.sink.frames.count
            #expect(try await eventually(30) { a.sink.frames.count > before + 1 })
            #expect(!a.sink.isFinished)
            #expect(a.sink.frames[beforeReload...].contains { $0.isKeyframe })  // the new encoder starts with one
            #expect(a.sink.frames.allSatisfy { $0.codec == .vp9 })

            // Unchanged or unreadable settings restart nothing.
            running.share.reload(.success(try ShareConfiguration(changed, environment: [:], destinationKinds: testKinds)))
            running.share.reload(.failure(ShareError(.invalidSettings, "config.toml line 1: bad")))
            try await Task.sleep(for: .milliseconds(300))
            #expect(made.count == 2)
        }
        #expect(ending == nil)
    }

    @Test func statusNamesEveryDestinationAndTheEmbeddedRelaysSessionWhichViewersCanWatch() async throws {
        var settings = ShareSettings.testing(to: [])
        settings.port = 0
        let ending = try await RunningShare.with(settings) { running in
            #expect(try await eventually(30) { running.printed.lines.count == 1 })
            let printed = try #require(running.printed.lines.first)
            #expect(printed.hasPrefix("session: ") && printed.contains("\nviewer:  http://127.0.0.1:"))
            let status = running.share.status
            #expect(status.ok && status.destinations?.count == 1)
            #expect(status.relay?.hasPrefix("ws://127.0.0.1:") == true)
            let viewerURL = try #require(status.viewerURL)
            let token = try #require(URLComponents(string: viewerURL)?.queryItems?.first { $0.name == "token" }?.value)
            #expect(try await eventually(30) { running.share.status.connected == true && running.share.status.streamId != nil })

            // A viewer on the relay's WebSocket sees the pattern, decoded. It joins a running stream: what it gets
            // first may be several cached frames to decode and not show (catch-up), so it watches until a picture
            // is shown rather than for a number of frames.
            let subscriber = StreamSubscriber(transport: WebSocketTransport(url: try #require(status.relay)), token: token, logger: Logger(label: "test.viewer"))
            let shown = ShownPictures()
            let watching = Task { try await subscriber.run(makeDecoder: { try makeVideoDecoder(for: $0) }, makeRenderer: { _ in shown }) }
            let sawAPicture = try await eventually(20) { shown.count >= 1 }
            watching.cancel()
            let summary = try await watching.value
            #expect(sawAPicture && summary.framesRendered >= 1 && summary.framesReceived >= summary.catchUpFrames + 1)
            #expect(summary.stream?.properties.videoType == .screen)
            #expect(try await eventually(30) { running.share.status.viewers == 0 })

        }
        #expect(ending == nil)
    }

    @Test func aTransientCaptureFailureIsRetriedWithCaptureRetry() async throws {
        var settings = ShareSettings.testing(to: ["collect:a"])
        settings.captureRetry = 0.05
        let (sources, made) = testPatternSources(failFirst: 2, with: X11CaptureError(.connectionLost, "the X server went away"))
        let ending = try await RunningShare.with(settings, sources: sources) { running in
            let a = try #require(running.collected["collect:a"])
            #expect(try await eventually(30) { a.sink.frames.count >= 2 })
            #expect(made.count == 3)
        }
        #expect(ending == nil)
    }

    @Test(arguments: [
        (X11CaptureError(.windowClosed, "the window was closed"), 0.05),  // will not pass: not retried
        (X11CaptureError(.connectionLost, "the X server went away"), 0.0),  // would pass, but no --capture-retry
    ])
    func aCaptureFailureEndsTheShareUnlessItMayPassAndRetryIsOn(error: X11CaptureError, retry: Double) async throws {
        var settings = ShareSettings.testing(to: ["collect:a"])
        settings.captureRetry = retry
        let (sources, made) = testPatternSources(failFirst: .max, with: error)
        let running = try await RunningShare.start(settings, sources: sources)
        let failure = await running.ended.value
        #expect(failure?.kind == .cannotStart)
        #expect(failure?.message == error.message)
        #expect(made.count == 1)
    }

    @Test func captureFailuresSayWhetherTheyMayPass() {
        #expect(X11CaptureError(.connectionLost, "").isTransient)
        #expect(X11CaptureError(.noDisplay, "").isTransient)
        #expect(!X11CaptureError(.windowClosed, "").isTransient)
        #expect(!X11CaptureError(.badRegion, "").isTransient)
    }

    @Test func aFileDestinationRecordsAndRefusesToReplaceARecording() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("share-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.webm").path
        var settings = ShareSettings.testing(to: ["file://" + path])
        settings.duration = 0.5
        let running = try await RunningShare.start(settings)
        #expect(await running.ended.value == nil)  // the duration ends it
        #expect(running.share.status.output == path)
        let reader = try WebMReader(path: path)
        var count = 0
        while try reader.nextFrame() != nil { count += 1 }
        // Every frame encoded is in the file (how many the 0.5 s held depends on the machine's load).
        #expect(count >= 1 && count == running.share.totals.framesEncoded)

        await #expect(throws: ShareError.self) { _ = try await RunningShare.start(.testing(to: [path])) }
    }
}
