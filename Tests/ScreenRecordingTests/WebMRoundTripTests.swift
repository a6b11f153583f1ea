import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

@Suite(.watchdog()) struct WebMRoundTripTests {
    func temporaryPath(_ name: String) -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("screenpub-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    /// Encodes `count` frames of a moving bar and writes them with the given metadata per frame.
    func record(
        path: String, codec: VideoCodec, count: Int, metadata: (Int) throws -> FrameMetadata,
        finish: Bool = true
    ) throws -> [CollectedFrame] {
        let frame = VideoFrame(width: 320, height: 180)
        let encoder = makeVideoEncoder(.init(codec: codec, framesPerSecond: 5))
        var writer: WebMWriter?
        let sink = CollectingSink()
        for index in 0..<count {
            TestPattern.fill(frame) { x, _ in x / 20 == index % 16 ? (255, 255, 255) : (10, 10, 40) }
            frame.captureTime = MediaTime(value: 1_000_000_000 + Int64(index) * 200_000_000, timescale: 1_000_000_000)
            frame.wallClock = WallClockTime(secondsSince1970: 1_795_324_222 + Int64(index), nanoseconds: 5_000_000)
            frame.metadata = try metadata(index)
            try encoder.encode(frame) { encoded in
                if writer == nil {
                    writer = try WebMWriter(
                        path: path, codec: codec, width: 320, height: 180, framesPerSecond: 5,
                        format: CodedVideoFormat(codec: codec, keyframe: encoded.payload))
                }
                try writer?.write(encoded)
                try sink.write(encoded)
            }
        }
        if finish { try writer?.finish() }
        return sink.frames
    }

    @Test(arguments: [VideoCodec.av1, .vp9, .vp8, .h264])
    func metadataAndTimesRoundTripFrameByFrame(codec: VideoCodec) throws {
        let path = temporaryPath("round-trip.\(RecordingContainer(for: codec).fileExtension)")
        let written = try record(path: path, codec: codec, count: 12) { index in
            index % 3 == 2 ? try FrameMetadata(bytes: [0xFF, UInt8(index), 0x00, 0x22]) : try FrameMetadata(text: "frame \(index) \"q\"")
        }
        let reader = try WebMReader(path: path)
        #expect(reader.codec == codec)
        #expect(reader.width == 320 && reader.height == 180)
        #expect(reader.hasMetadataTrack)
        #expect(reader.videoType == .screen)
        #expect(reader.estimatedFramesPerSecond == 5)
        let frames = try reader.readAll()
        #expect(frames.count == 12)
        for (read, original) in zip(frames, written) {
            #expect(read.payload == original.payload)
            #expect(read.isKeyframe == original.isKeyframe)
            #expect(read.cue?.metadata == original.metadata)
            #expect(read.cue?.captureTime == original.captureTime)
            #expect(read.cue?.wallClock.secondsSince1970 == 1_795_324_222 + Int64(read.index))
            #expect(read.timestamp == MediaTime(value: Int64(read.index) * 200, timescale: 1000))
        }
        // The frames decode.
        let decoder = try makeVideoDecoder(for: codec)
        var decoded = 0
        for frame in frames { try frame.payload.withUnsafeBytes { try decoder.decode($0) { _ in decoded += 1 } } }
        #expect(decoded == 12)
    }

    @Test(arguments: [VideoCodec.vp9, .av1, .h264])
    func ffprobeReadsTheFrameCountAndAMetadataTrack(codec: VideoCodec) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") else {
            Issue.record("ffprobe is not installed (apt-get install ffmpeg)")
            return
        }
        let path = temporaryPath("probe.\(RecordingContainer(for: codec).fileExtension)")
        _ = try record(path: path, codec: codec, count: 10) { _ in .iso8601(.now()) }
        let output = try await ChildProcess.run(
            "/usr/bin/ffprobe",
            ["-v", "error", "-count_frames", "-show_entries", "stream=codec_name,codec_type,nb_read_frames:stream_disposition=metadata", "-of", "compact", path]
        ).standardOutput
        #expect(output.contains("codec_name=\(codec)|codec_type=video|nb_read_frames=10"), "\(output)")
        #expect(output.contains("codec_name=webvtt|codec_type=subtitle|nb_read_frames=10"))
        // WebM's D_WEBVTT/METADATA; libavformat's Matroska muxer writes every WebVTT track as D_WEBVTT/SUBTITLES.
        #expect(output.contains("disposition:metadata=1") == (codec != .h264), "\(output)")
    }

    @Test func anUnfinishedFileIsReadableUpToItsLastFrame() throws {
        // The writer is abandoned without its trailer, as when the process is killed: every frame written
        // so far was flushed in its own cluster.
        let path = temporaryPath("killed.webm")
        let source = temporaryPath("killed-copy.webm")
        let frame = VideoFrame(width: 160, height: 90)
        let encoder = RealtimeEncoder(configuration: .init(codec: .vp9))
        let writer = try WebMWriter(path: path, codec: .vp9, width: 160, height: 90, framesPerSecond: 5)
        for index in 0..<7 {
            TestPattern.fill(frame) { x, _ in x < index * 20 ? (255, 0, 0) : (0, 0, 255) }
            frame.captureTime = MediaTime(value: Int64(index), timescale: 5)
            frame.metadata = try FrameMetadata(text: "\(index)")
            try encoder.encode(frame) { try writer.write($0) }
        }
        // Copy the file as it is on disk now, before the writer finishes it.
        try FileManager.default.copyItem(atPath: path, toPath: source)
        try writer.finish()
        let frames = try WebMReader(path: source).readAll()
        #expect(frames.count == 7)
        #expect(frames.last?.cue?.metadata == (try FrameMetadata(text: "6")))
    }

    @Test func aWriteToAFullDiskIsAClearError() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { try Test.cancel("this system has no /dev/full to write to") }
        #expect(throws: RecordingError.self) {
            _ = try record(path: "/dev/full", codec: .vp9, count: 3) { _ in .empty }
        }
    }

    @Test func unwritableAndUnreadablePathsAreClearErrors() throws {
        let error = #expect(throws: RecordingError.self) {
            _ = try WebMWriter(path: "/nonexistent-dir/x.webm", codec: .vp9, width: 16, height: 16, framesPerSecond: 5)
        }
        #expect(error?.kind == .cannotOpen)
        #expect(error?.description.contains("/nonexistent-dir/x.webm") == true)
        let path = temporaryPath("not-webm.webm")
        try Data("this is not a video".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: RecordingError.self) { _ = try WebMReader(path: path) }
    }
}

