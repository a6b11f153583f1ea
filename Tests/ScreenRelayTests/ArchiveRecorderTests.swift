import Foundation
import NIOCore
import ScreenMedia
@testable import ScreenRelay
import ScreenWire
import ScreenTesting
import Testing

/// The recorder on its own, where a real full disk can be arranged: the stream's file is /dev/full.
@Suite(.watchdog()) struct ArchiveRecorderTests {
    @Test
    func aFullDiskFailsTheRecordingWithTheReasonOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("stream-1.webm").path, withDestinationPath: "/dev/full")
        let failures = Locked<[String]>([])
        let recorder = try ArchiveRecorder(archiveId: "a1", folder: folder) { reason in failures.withLock { $0.append(reason) } }
        recorder.record(try TestMedia.encodedFrames(count: 5))
        let summary = await recorder.finish()
        #expect(failures.value.count == 1, "\(failures.value)")
        #expect(failures.value.first?.contains("No space left on device") == true, "\(failures.value)")
        #expect(summary.failure == failures.value.first)
    }

    /// Nine VP9 frames in a row that are not shown are more than the muxer's superframe filter holds (it would
    /// then refuse every frame after): those past the sixth are left out, and only they; the recording goes on.
    @Test
    func framesTheMuxerRefusesCostOnlyThemselves() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = try ArchiveRecorder(archiveId: "a2", folder: folder) { reason in Issue.record("the recording failed: \(reason)") }
        let frames = try TestMedia.encodedFrames(count: 12)
        var sequence: UInt64 = 0
        func record(_ payload: [UInt8], like frame: CollectedFrame) {
            var header = TestMedia.header(frame, streamId: 1, sequence: sequence)
            header.payloadLength = payload.count
            header.captureTime = MediaTime(value: Int64(sequence), timescale: 5)
            var buffer = ByteBuffer()
            buffer.writeBytes(header.encoded() + payload)
            recorder.record(buffer, header: header, framesPerSecond: 5, audio: nil)
            sequence += 1
        }
        record(frames[0].payload, like: frames[0])
        // 0x84: a VP9 inter frame with show_frame 0.
        for _ in 0..<9 { record([0x84] + [UInt8](repeating: 0, count: 40), like: frames[1]) }
        for frame in frames.dropFirst() { record(frame.payload, like: frame) }
        let summary = await recorder.finish()
        #expect(summary.failure == nil)
        #expect(summary.size > 0 && summary.streams == 1)
        // (Read once the queue is done with it: finish() has returned.)
        #expect(recorder.refusedFrames == 3, "the frames not shown past the sixth in a row, and only they")
    }
}

extension ArchiveRecorder {
    /// Queues `frames` as stream 1 at 5 fps, each as the relay holds it (header and payload in one buffer).
    func record(_ frames: [CollectedFrame]) {
        for (index, frame) in frames.enumerated() {
            let header = TestMedia.header(frame, streamId: 1, sequence: UInt64(index))
            var buffer = ByteBuffer()
            buffer.writeBytes(header.encoded() + frame.payload)
            record(buffer, header: header, framesPerSecond: 5, audio: nil)
        }
    }
}
