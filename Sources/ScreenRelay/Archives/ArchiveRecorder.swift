import Crypto
import Dispatch
import Foundation
import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenWire
import Synchronization

/// Writes a session's streams to WebM files (Matroska for H.264, ``RecordingContainer``) as their frames arrive, without re-encoding: one file per stream
/// (``RelayStore/fileName(stream:)``, each starting at a keyframe) with the frames' metadata as its timed metadata track
/// and the stream's Opus sound, when it has any, as an audio track.
///
/// Writing happens on a serial queue of its own, so a slow disk never holds back the session; the queue is
/// bounded (``maximumBacklog`` frames) and a recorder that falls that far behind fails rather than growing.
/// A write error (a full disk) fails the recording once, through `onFailure`; what was written stays playable
/// (every frame is flushed in its own cluster).
final class ArchiveRecorder: @unchecked Sendable {
    // @unchecked: `writers`, `opened`, `first`, `last`, `resolution`, `failure`, `limitReached`, `refusedFrames` and
    // `framesSinceSpaceCheck` are touched only on `queue`, a serial
    // queue; `backlog` is atomic; the rest is immutable.
    let archiveId: String
    private let folder: URL
    private let queue: DispatchQueue
    private let onFailure: @Sendable (String) -> Void
    private let backlog = Atomic<Int>(0)
    private var writers: [UInt32: WebMWriter] = [:]
    /// Every stream whose file was opened, whether or not its writer is still open (a failed recording keeps its
    /// files, readable up to the last frame written, and counts their size).
    private var opened: [UInt32: RecordingContainer] = [:]
    private var first: MediaTime?
    private var last: MediaTime?
    private var resolution = ""
    private var failure: String?
    /// What it may write in all (``ArchiveLimits/allowance(sessionUsed:relayUsed:freeSpace:)``), the free space
    /// it must leave, and why it stopped at one of them (nil while it has not).
    private let allowance: Int64
    private let freeSpaceFloor: Int64
    private var limitReached: String?
    private let onLimit: @Sendable (String) -> Void
    private var framesSinceSpaceCheck = 0
    /// Frames the muxer refused as invalid data, left out.
    private(set) var refusedFrames = 0

    static let maximumBacklog = 600

    struct Summary: Sendable {
        var duration: Double
        var streams: Int
        var resolution: String
        var size: Int
        var sha256: String?
        var failure: String?
    }

    init(
        archiveId: String, folder: URL, allowance: Int64 = .max, freeSpaceFloor: Int64 = 0,
        onLimit: @escaping @Sendable (String) -> Void = { _ in }, onFailure: @escaping @Sendable (String) -> Void
    ) throws {
        self.archiveId = archiveId
        self.folder = folder
        self.allowance = allowance
        self.freeSpaceFloor = freeSpaceFloor
        self.onLimit = onLimit
        self.onFailure = onFailure
        queue = DispatchQueue(label: "screenrelay.archive.\(archiveId)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw RecordingError(.cannotOpen, "cannot create the archive folder \(folder.path): \(error.localizedDescription)")
        }
    }

    /// Queues one video frame (the relay's shared buffer: not copied). `audio`: the stream's sound, for the
    /// file's audio track (a file is opened at the stream's first keyframe, with the tracks it has then).
    func record(_ buffer: ByteBuffer, header: MediaFrameHeader, framesPerSecond: Double, audio: AudioProperties?) {
        enqueue { self.write(buffer, header: header, framesPerSecond: framesPerSecond, audio: audio) }
    }

    /// Queues one audio frame; it goes into its stream's file once that file is open.
    func recordAudio(_ buffer: ByteBuffer, header: AudioFrameHeader) {
        enqueue { self.writeAudio(buffer, header: header) }
    }

    private func enqueue(_ work: @escaping @Sendable () -> Void) {
        if backlog.add(1, ordering: .relaxed).newValue > Self.maximumBacklog {
            backlog.subtract(1, ordering: .relaxed)
            queue.async { self.fail("the disk did not keep up: \(Self.maximumBacklog) frames waited to be written") }
            return
        }
        queue.async {
            defer { self.backlog.subtract(1, ordering: .relaxed) }
            work()
        }
    }

    private func writeAudio(_ buffer: ByteBuffer, header: AudioFrameHeader) {
        guard failure == nil, limitReached == nil, let writer = writers[header.streamID], writer.hasAudio else { return }
        do {
            try buffer.withUnsafeReadableBytes { bytes throws in
                guard case .audio(_, let range) = try MediaMessage.parse(bytes) else { return }
                try writer.writeAudio(EncodedAudioFrame(
                    codec: header.codec, payload: UnsafeRawBufferPointer(rebasing: bytes[range]), channels: header.channels,
                    samples: header.samples, captureTime: header.captureTime,
                    wallClock: WallClockTime(millisecondsSince1970: header.wallClockMilliseconds), isSilence: header.isSilence))
            }
        } catch {
            fail("\(error)")
        }
    }

    private func write(_ buffer: ByteBuffer, header: MediaFrameHeader, framesPerSecond: Double, audio: AudioProperties?) {
        guard failure == nil, limitReached == nil else { return }
        do {
            if writers[header.streamID] == nil {
                // Each file starts at a keyframe (the relay asked the publishers for one when recording began).
                guard header.isKeyframe else { return }
                let container = RecordingContainer(for: header.codec)
                writers[header.streamID] = try WebMWriter(
                    path: folder.appendingPathComponent(RelayStore.fileName(stream: header.streamID, container: container)).path, codec: header.codec,
                    width: header.width, height: header.height, framesPerSecond: framesPerSecond, audio: audio,
                    format: header.codedFormat(in: buffer))
                opened[header.streamID] = container
                if resolution.isEmpty { resolution = "\(header.width)x\(header.height)" }
            }
            try buffer.withUnsafeReadableBytes { bytes throws in
                let range = try MediaFrameHeader.parse(bytes).payload
                try writers[header.streamID]?.write(EncodedFrame(
                    codec: header.codec, payload: UnsafeRawBufferPointer(rebasing: bytes[range]), isKeyframe: header.isKeyframe,
                    width: header.width, height: header.height, captureTime: header.captureTime,
                    wallClock: WallClockTime(millisecondsSince1970: header.wallClockMilliseconds), metadata: header.metadata))
            }
            if first == nil { first = header.captureTime }
            last = header.captureTime
            checkLimits()
        } catch let refused as RecordingError where refused.kind == .frameRefused {
            // A frame the muxer will not take costs that frame only, not the recording.
            refusedFrames += 1
        } catch {
            fail("\(error)")
        }
    }

    /// After each frame: its size against its allowance, and every 25 frames the disk's free space.
    private func checkLimits() {
        let written = writers.values.reduce(Int64(0)) { $0 &+ $1.bytesWritten }
        if written >= allowance {
            stop(atLimit: "the recording reached its size limit (\(allowance >> 20) MiB: archive-max-size or what the quotas left it)")
            return
        }
        framesSinceSpaceCheck += 1
        guard framesSinceSpaceCheck >= 25, freeSpaceFloor > 0 else { return }
        framesSinceSpaceCheck = 0
        if let free = ArchiveLimits.freeSpace(at: folder.path), free < freeSpaceFloor {
            stop(atLimit: "the disk has \(free >> 20) MiB free, under the \(freeSpaceFloor >> 20) MiB recordings leave free (archive-free-space)")
        }
    }

    /// A limit reached: the files are finished where they are (complete and playable) and the recording ends.
    private func stop(atLimit reason: String) {
        guard limitReached == nil, failure == nil else { return }
        limitReached = reason
        for writer in writers.values { try? writer.finish() }
        onLimit(reason)
    }

    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        for writer in writers.values { try? writer.finish() }
        writers = [:]
        onFailure(reason)
    }

    /// What has been written so far (a recording in progress, as the archive API shows it): its length, streams,
    /// first resolution and bytes on disk.
    func progress() async -> Summary {
        await withCheckedContinuation { continuation in
            queue.async {
                let files = self.files
                var duration = 0.0
                if let first = self.first, let last = self.last { duration = (last - first).seconds }
                continuation.resume(returning: Summary(
                    duration: duration, streams: files.count, resolution: self.resolution, size: RelayStore.size(of: files), sha256: nil,
                    failure: self.failure))
            }
        }
    }

    /// Finishes every file and sums up what was recorded.
    func finish() async -> Summary {
        await withCheckedContinuation { continuation in
            queue.async {
                for writer in self.writers.values {
                    do { try writer.finish() } catch { self.failure = self.failure ?? "\(error)" }
                }
                let files = self.files
                self.writers = [:]
                var duration = 0.0
                if let first = self.first, let last = self.last { duration = (last - first).seconds }
                continuation.resume(returning: Summary(
                    duration: duration, streams: files.count, resolution: self.resolution, size: RelayStore.size(of: files),
                    sha256: files.first.flatMap(Self.sha256), failure: self.failure))
            }
        }
    }

    /// The files opened so far (on `queue`).
    private var files: [URL] {
        opened.sorted { $0.key < $1.key }.map { folder.appendingPathComponent(RelayStore.fileName(stream: $0.key, container: $0.value)) }
    }

    /// The file's SHA-256, hex, read in 1 MiB pieces.
    static func sha256(of file: URL) -> String? {
        // A regular file only (not followed through a link): what the relay wrote, never a device that reads forever.
        guard (try? FileManager.default.attributesOfItem(atPath: file.path)[.type] as? FileAttributeType) == .typeRegular,
            let handle = try? FileHandle(forReadingFrom: file)
        else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
