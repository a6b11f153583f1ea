import Foundation
import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenTesting
import ScreenWire
import Testing

@testable import ScreenRelay

/// The packager fed real VP9 frames directly: where segments end, and what happens when the stream changes.
@Suite(.watchdog()) struct HLSPackagerTests {
    /// The frames of `frames` as the relay holds them (header, metadata, payload in one buffer), from `streamId`,
    /// captured from `start` on.
    static func buffers(_ frames: [CollectedFrame], streamId: UInt32, start: MediaTime) -> [(ByteBuffer, MediaFrameHeader)] {
        frames.enumerated().map { index, frame in
            var header = TestMedia.header(frame, streamId: streamId, sequence: UInt64(index))
            header.captureTime = start + MediaTime(value: Int64(index), timescale: 5)
            var buffer = ByteBuffer(bytes: header.encoded())
            buffer.writeBytes(frame.payload)
            return (buffer, header)
        }
    }

    @Test
    func aNewStreamFromAnotherClockContinuesTheTimelineAfterADiscontinuity() async throws {
        let requests = Locked(0)
        let packager = HLSPackager(
            configuration: .init(segmentSeconds: 1), label: "test-\(UUID().uuidString.prefix(6))",
            requestKeyframe: { requests.withLock { $0 += 1 } }, onIdle: {})
        defer { packager.stop() }
        // Keyframes every 5 frames (1 s at 5 fps), as a publisher answers the packager's requests.
        var frames = try TestMedia.encodedFrames(count: 15)
        for index in frames.indices where index % 5 == 0 { frames[index] = try Self.keyframe(like: frames[index]) }
        for (buffer, header) in Self.buffers(frames, streamId: 1, start: MediaTime(value: 100, timescale: 1)) {
            packager.frame(buffer, header: header, framesPerSecond: 5)
        }
        // Then another stream whose clock is hours away (another machine, or a restarted publisher).
        for (buffer, header) in Self.buffers(Array(frames.prefix(11)), streamId: 2, start: MediaTime(value: 90_000, timescale: 1)) {
            packager.frame(buffer, header: header, framesPerSecond: 5)
        }
        #expect(await packager.waitUntilPlayable(client: .anyone, clientLimit: .max) == .ready)
        let snapshot = try await Self.snapshot(of: packager, segments: 5)
        // Three segments of the first stream, two of the second (its 11th frame opens a third, not yet complete).
        #expect(snapshot.segments.map(\.duration) == [1, 1, 1, 1, 1], "\(snapshot.segments.map(\.duration))")
        #expect(snapshot.segments.map(\.discontinuity) == [false, false, false, true, false])
        #expect(snapshot.segments.map(\.initialization) == [0, 0, 0, 1, 1] && snapshot.initializations.keys.sorted() == [0, 1])
        // The new stream's first frame comes one frame after the old one's last: no jump of hours.
        let times = snapshot.segments.flatMap { TimedMetadataReader.events(in: $0.bytes).map(\.presentationTime) }
        #expect(times == (0..<25).map { UInt64($0) * 18_000 }, "\(times)")
    }

    /// The packager's snapshot once it lists `segments` segments (packaging runs on its own queue), or after 5 s.
    static func snapshot(of packager: HLSPackager, segments: Int) async throws -> HLSSnapshot {
        var snapshot = packager.snapshot
        for _ in 0..<100 where snapshot.segments.count < segments {
            try await Task.sleep(for: .milliseconds(50))
            snapshot = packager.snapshot
        }
        return snapshot
    }

    /// `frame` encoded again as a keyframe (the same picture).
    static func keyframe(like frame: CollectedFrame) throws -> CollectedFrame {
        var keyframe = try TestMedia.encodedFrames(count: 1)[0]
        keyframe.captureTime = frame.captureTime
        keyframe.metadata = frame.metadata
        return keyframe
    }
}
