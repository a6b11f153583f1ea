import Foundation
import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenWire
import Testing

@testable import ScreenRelay

/// The budgets of what clients control, each met directly: HLS segments and memory, archive quotas, API rates,
/// a session's streams, frame rates and what a joiner's welcome holds.
@Suite(.watchdog()) struct RelayBudgetTests {
    typealias Router = StreamRouter<String>
    static let properties = StreamProperties(
        codec: .vp9, width: 1280, height: 720, estimatedFramesPerSecond: 5, estimatedCaptureDelayMilliseconds: 1)

    /// A publisher whose keyframe is late (or never comes): its segments are split at the target duration, the
    /// frames going on in the next one, so no picture is lost and no segment outgrows the playlist's target; the
    /// playlist stops saying its segments are independent while such a one is listed.
    @Test func aSegmentWithoutKeyframesIsSplitAtItsTargetDuration() async throws {
        let requests = Locked(0)
        let packager = HLSPackager(
            configuration: .init(segmentSeconds: 1), label: "budget-\(UUID().uuidString.prefix(6))",
            requestKeyframe: { requests.withLock { $0 += 1 } }, onIdle: {})
        defer { packager.stop() }
        let frames = try TestMedia.encodedFrames(count: 40)
        let key = try HLSPackagerTests.keyframe(like: frames[30])
        for (buffer, header) in HLSPackagerTests.buffers(frames.prefix(30) + [key] + frames.suffix(9), streamId: 1, start: MediaTime(value: 100, timescale: 1)) {
            packager.frame(buffer, header: header, framesPerSecond: 5)
        }
        #expect(await packager.waitUntilPlayable(client: .anyone, clientLimit: .max) == .ready)
        // Target duration 2 s, frames every 0.2 s: split at 2 s and 4 s; the keyframe at 6 s starts the fourth.
        let snapshot = try await HLSPackagerTests.snapshot(of: packager, segments: 3)
        #expect(snapshot.segments.map(\.duration) == [2, 2, 2], "\(snapshot.segments.map(\.duration))")
        #expect(snapshot.segments.map(\.independent) == [true, false, false])
        #expect(snapshot.segments.map(\.discontinuity).allSatisfy { !$0 }, "one timeline, no gap")
        let times = snapshot.segments.flatMap { TimedMetadataReader.events(in: $0.bytes).map(\.presentationTime) }
        #expect(times == (0..<30).map { UInt64($0) * 18_000 }, "every frame, in order: \(times)")
        #expect(requests.withLock { $0 } >= 1, "the packager asked for the keyframe")
        let media = HLSPlaylist.media(snapshot, targetDuration: 2, query: "")
        #expect(!media.contains("INDEPENDENT-SEGMENTS"), "\(media)")
    }

    @Test func hlsMemoryStaysWithinTheSessionsAndTheRelaysBudgets() async throws {
        let relay = HLSMemoryBudget(limit: 200_000)
        var configuration = HLSPackager.Configuration(segmentSeconds: 0.5, partSeconds: 0.25)
        configuration.sessionMemoryBytes = 150_000
        configuration.relayMemory = relay
        let packager = HLSPackager(configuration: configuration, label: "memory-\(UUID().uuidString.prefix(6))", requestKeyframe: {}, onIdle: {})
        var frames = try TestMedia.encodedFrames(count: 60)
        for index in frames.indices where index % 3 == 0 { frames[index] = try HLSPackagerTests.keyframe(like: frames[index]) }
        for (buffer, header) in HLSPackagerTests.buffers(frames, streamId: 1, start: MediaTime(value: 100, timescale: 1)) {
            packager.frame(buffer, header: header, framesPerSecond: 5)
        }
        #expect(await packager.waitUntilPlayable(client: .anyone, clientLimit: .max) == .ready)
        try await Task.sleep(for: .milliseconds(500))
        let snapshot = packager.snapshot
        let held = snapshot.bytes
        #expect(held <= 150_000 && held > 0, "\(held) bytes held")
        #expect(relay.bytesInUse == held)
        packager.stop()
        #expect(relay.bytesInUse == 0, "a stopped packager gives its share back")
    }

    @Test func archiveAllowanceFollowsTheQuotasAndTheFreeSpace() throws {
        let limits = ArchiveLimits(recordingBytes: 100, sessionBytes: 300, relayBytes: 1000, freeSpaceBytes: 50)
        #expect(try limits.allowance(sessionUsed: 0, relayUsed: 0, freeSpace: 10_000).get() == 100)
        #expect(try limits.allowance(sessionUsed: 250, relayUsed: 250, freeSpace: nil).get() == 50)
        #expect(try limits.allowance(sessionUsed: 0, relayUsed: 960, freeSpace: nil).get() == 40)
        for (session, relay, free) in [(300, 0, 10_000), (0, 1000, 10_000), (0, 0, 49)] as [(Int64, Int64, Int64)] {
            guard case .failure(let refusal) = limits.allowance(sessionUsed: session, relayUsed: relay, freeSpace: free) else {
                Issue.record("recording allowed at \(session)/\(relay)/\(free)")
                continue
            }
            #expect(refusal.description.contains("archive-"), "\(refusal)")
        }
    }

    /// A recording that reaches its allowance stops there, once, its file finished and playable.
    @Test func aRecordingStopsAtItsSizeLimitWithItsFileFinished() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("limit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let limits = Locked<[String]>([])
        let recorder = try ArchiveRecorder(
            archiveId: "a1", folder: folder, allowance: 2_000, onLimit: { reason in limits.withLock { $0.append(reason) } },
            onFailure: { reason in Issue.record("failed: \(reason)") })
        recorder.record(try TestMedia.encodedFrames(count: 30))
        let summary = await recorder.finish()
        #expect(limits.value.count == 1 && limits.value.first?.contains("size limit") == true, "\(limits.value)")
        #expect(summary.failure == nil && summary.size > 0)
        let probe = try await ChildProcess.run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", folder.appendingPathComponent(RelayStore.fileName(stream: 1, container: .webm)).path])
        #expect(probe.status == 0, "\(probe.standardError)")
    }

    @Test func apiCallsHaveARatePerSession() {
        let limiter = RequestRateLimiter()
        let markers = (0..<25).map { _ in limiter.allow(.marker, session: "s", now: 0) }
        #expect(markers.count { $0 } == 20)
        #expect(limiter.allow(.marker, session: "other", now: 0), "another session has its own")
        #expect(limiter.allow(.marker, session: "s", now: 0.3), "5 a second come back")
        let archives = (0..<6).map { _ in limiter.allow(.archive, session: "s", now: 0) }
        #expect(archives.count { $0 } == 4)
        #expect(!limiter.allow(.archive, session: "s", now: 1) && limiter.allow(.archive, session: "s", now: 2.1))
    }

    @Test func aSessionsStreamsAreCappedAndEveryWelcomeFitsAControlMessage() throws {
        var router = Router(sessionId: "s")
        let bulky = String(repeating: "\u{1}", count: 1000)
        for index in 0..<50 {
            let id = "p\(index)"
            _ = router.connect(ConnectionInfo(connectionId: id, role: .publisher, data: bulky))
            for stream in 0..<2 {
                _ = router.handle(.publish(name: String(repeating: "n", count: 256), properties: Self.properties), from: id, now: Double(stream))
            }
        }
        #expect(router.streamCount == 32)
        #expect(router.counters.refused[.streamsPerSession] == 68)
        for index in 0..<1900 { _ = router.connect(ConnectionInfo(connectionId: "v\(index)", role: .subscriber, data: bulky)) }
        let joined = router.connect(ConnectionInfo(connectionId: "late", role: .subscriber, data: ""))
        guard case .sendControl(let welcome, "late")? = joined.first else {
            Issue.record("no welcome")
            return
        }
        let text = welcome.encoded()
        #expect(text.utf8.count < ControlMessage.maximumSize, "\(text.utf8.count) bytes")
        #expect((try? ControlMessage.parse(text)) != nil, "a joiner can read it")
    }

    @Test func framesFasterThanTheRateAreRefused() {
        var router = Router(sessionId: "s")
        _ = router.connect(ConnectionInfo(connectionId: "p", role: .publisher, data: ""))
        _ = router.handle(.publish(name: "screen", properties: Self.properties), from: "p", now: 0)
        var admitted = 0
        for sequence in 0..<1000 {
            let header = MediaFrameHeader(
                streamID: 1, sequence: UInt64(sequence), flags: sequence == 0 ? .keyframe : [], codec: .vp9, width: 1280, height: 720,
                captureTime: MediaTime(value: Int64(sequence), timescale: 1000), wallClockMilliseconds: 0, metadata: .empty, payloadLength: 10)
            if router.receive("f", header: header, size: 10, from: "p", now: Double(sequence) / 1000).admitted { admitted += 1 }
        }
        // A thousand frames in a second: the burst of 480 and 240 more.
        #expect(admitted >= 700 && admitted <= 730, "\(admitted)")
        #expect(router.counters.refused[.frameRate] == 1000 - admitted)
    }

    /// One token's many connections cannot multiply the chat: the session as a whole sends at most 50 signals a
    /// second (100 at once), each to everyone.
    @Test func aSessionsSignalsTogetherHaveARate() {
        var router = Router(sessionId: "s")
        for index in 0..<40 { _ = router.connect(ConnectionInfo(connectionId: "c\(index)", role: .publisher, data: "")) }
        var delivered = 0
        for second in 0..<3 {
            for index in 0..<40 {
                for _ in 0..<20 {
                    delivered += router.handle(.signal(Signal(type: "chat", data: "x")), from: "c\(index)", now: Double(second)).count {
                        if case .sendControl(.signal, _) = $0 { true } else { false }
                    }
                }
            }
        }
        // 100 at once and 50 a second after, each to the 40 connections (instead of 40 × 20 × 3 = 2 400 signals).
        #expect(delivered == (100 + 2 * 50) * 40, "\(delivered) deliveries")
    }
}
