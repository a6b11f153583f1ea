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
        for (index, frame) in try TestMedia.encodedFrames(count: 5).enumerated() {
            let header = TestMedia.header(frame, streamId: 1, sequence: UInt64(index))
            var buffer = ByteBuffer()
            buffer.writeBytes(header.encoded() + frame.payload)
            recorder.record(buffer, header: header, framesPerSecond: 5, audio: nil)
        }
        let summary = await recorder.finish()
        #expect(failures.value.count == 1, "\(failures.value)")
        #expect(failures.value.first?.contains("No space left on device") == true, "\(failures.value)")
        #expect(summary.failure == failures.value.first)
    }
}
