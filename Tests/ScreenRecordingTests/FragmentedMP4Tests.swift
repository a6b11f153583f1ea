import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// CMAF fragments from real VP9 frames, each after an `emsg` with the frame's ID3 metadata, read back by
/// ffprobe (the video) and by mutagen (the timed metadata) — readers independent of screenpub.
@Suite(.watchdog()) struct FragmentedMP4Tests {
    /// 10 frames at 5 fps (0.2 s apart) with text metadata, but binary on frame 3; the stream as a file.
    func writeStream(to path: String, codec: VideoCodec = .vp9, h264Timing: H264Timing? = nil) throws -> [CollectedFrame] {
        let frame = VideoFrame(width: 320, height: 180)
        let encoder = makeVideoEncoder(.init(codec: codec, framesPerSecond: 5))
        let sink = CollectingSink()
        for index in 0..<10 {
            TestPattern.fill(frame) { x, _ in x / 20 == index ? (255, 255, 255) : (10, 10, 40) }
            frame.captureTime = MediaTime(value: 5_000_000_000 + Int64(index) * 200_000_000, timescale: 1_000_000_000)
            frame.wallClock = WallClockTime(millisecondsSince1970: 1_795_400_000_000 + Int64(index) * 200)
            frame.metadata = index == 3 ? try FrameMetadata(bytes: [0x00, 0xFF, 0x10]) : try FrameMetadata(text: "slide \(index)")
            try encoder.encode(frame) { try sink.write($0) }
        }
        let writer = try FragmentedMP4Writer(
            codec: codec, width: 320, height: 180, framesPerSecond: 5,
            format: sink.frames.first.flatMap { CodedVideoFormat(codec: codec, keyframe: $0.payload) }, h264Timing: h264Timing)
        var stream = writer.initializationSegment
        for (index, frame) in sink.frames.enumerated() {
            let time = Int64(index) * 18_000
            stream += EventMessageBox(
                timescale: UInt32(FragmentedMP4Writer.timescale), presentationTime: UInt64(time), duration: 18_000, identifier: UInt32(index),
                message: ID3MetadataTag(metadata: frame.metadata, wallClock: frame.wallClock).bytes
            ).bytes
            stream += try frame.payload.withUnsafeBytes {
                try writer.fragment(payload: $0, isKeyframe: frame.isKeyframe, time: time, duration: 18_000)
            }
        }
        try Data(stream).write(to: URL(fileURLWithPath: path))
        return sink.frames
    }

    @Test(arguments: [VideoCodec.vp9, .av1, .h264])
    func ffprobeReadsEveryFrameAtItsTime(codec: VideoCodec) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cmaf-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frames = try writeStream(to: path, codec: codec)
        #expect(frames.first?.isKeyframe == true)
        let streams = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,codec_tag_string,width,height", "-of", "json", path])
        let stream = try #require((try JSONSerialization.jsonObject(with: Data(streams.standardOutput.utf8)) as? [String: Any])?["streams"] as? [[String: Any]]).first
        let (name, tag) = [VideoCodec.av1: ("av1", "av01"), .vp9: ("vp9", "vp09"), .h264: ("h264", "avc1")][codec] ?? ("", "")
        #expect(stream?["codec_name"] as? String == name && stream?["codec_tag_string"] as? String == tag, "\(streams)")
        #expect(stream?["width"] as? Int == 320 && stream?["height"] as? Int == 180)
        let packets = try await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,flags,size", "-of", "csv=p=0", path])
        let lines = packets.standardOutput.split(separator: "\n")
        #expect(lines.count == 10, "\(packets)")
        for (index, line) in lines.enumerated() {
            let fields = line.split(separator: ",")
            #expect(Double(fields[0]).map { Int(($0 * 1000).rounded()) } == index * 200, "\(line)")
            // H.264 samples hold each NAL unit after its length rather than a start code.
            let sample = codec == .h264 ? H264AccessUnit.lengthPrefixed(annexB: frames[index].payload) : frames[index].payload
            #expect(Int(fields[1]) == sample?.count)
            #expect(fields[2].hasPrefix("K") == frames[index].isKeyframe)
        }
        // And the pictures decode.
        let decoded = try await ChildProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.standardError.isEmpty, "\(decoded.standardError)")
    }

    /// The sample entry is `avc1` with the keyframe's `avcC`; a payload that is not Annex B (a hostile publisher's)
    /// becomes a sample of what NAL units it holds, none, without a trap.
    @Test func anH264TrackIsAnAVC1SampleEntryAndHostilePayloadsDoNotTrap() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cmaf-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frames = try writeStream(to: path, codec: .h264)
        let sets = try #require(frames.first.flatMap { H264ParameterSets(accessUnit: $0.payload) })
        let writer = try FragmentedMP4Writer(
            codec: .h264, width: 320, height: 180, framesPerSecond: 5, format: CodedVideoFormat(codec: .h264, keyframe: frames[0].payload))
        let initialization = writer.initializationSegment
        #expect(initialization.firstRange(of: Array("avc1".utf8)) != nil)
        #expect(initialization.firstRange(of: Array("avcC".utf8) + sets.decoderConfigurationRecord) != nil)
        for (index, hostile) in [[UInt8](), [0, 0, 1], [0, 0, 0, 1, 0, 0, 1], Array(repeating: 0xFF, count: 100), [0x65, 0x88]].enumerated() {
            _ = try? hostile.withUnsafeBytes { try writer.fragment(payload: $0, isKeyframe: false, time: Int64(index) * 18_000, duration: 18_000) }
        }
    }

    /// GStreamer's h264parse (what WebKitGTK's Media Source Extensions put after qtdemux) drops the samples'
    /// durations and times frames by the SPS: none without timing; with the timing the writer adds to `avcC` and to
    /// each keyframe's SPS, two ticks a frame. ffmpeg decodes both.
    @Test func gstreamersH264ParserTimesFramesByTheTimingInTheSPS() async throws {
        for timing in [nil, H264Timing(frameSeconds: 0.7)] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("cmaf-\(UUID().uuidString).mp4").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let frames = try writeStream(to: path, codec: .h264, h264Timing: timing)
            let parsed = try await ChildProcess.run(
                "/usr/bin/gst-launch-1.0", ["-v", "filesrc", "location=\(path)", "!", "qtdemux", "!", "h264parse", "!", "fakesink", "silent=false"])
            let durations = parsed.standardOutput.split(separator: "\n").filter { $0.contains("chain   ***") }.compactMap { line in
                line.range(of: "duration: ").map { String(line[$0.upperBound...].prefix { $0 != "," }) }
            }
            #expect(durations == Array(repeating: timing == nil ? "none" : "0:00:00.700000000", count: 10), "\(parsed.standardOutput.suffix(2000))")
            // The SPS with its timing in `avcC` and in the keyframe, never without.
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let sequence = try #require(frames.first.flatMap { H264ParameterSets(accessUnit: $0.payload) }?.sequenceParameterSet)
            let timed = try #require(timing.map { $0.sequenceParameterSet(sequence) } ?? sequence)
            #expect(file.ranges(of: timed).count == 2 && (timing == nil || file.ranges(of: sequence).isEmpty))
            let decoded = try await ChildProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
            #expect(decoded.status == 0 && decoded.standardError.isEmpty, "\(decoded.standardError)")
        }
    }

    @Test func ourReaderReadsWhatOurWritersWrote() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cmaf-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frames = try writeStream(to: path)
        let events = TimedMetadataReader.events(in: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(events.count == 10)
        for (index, event) in events.enumerated() {
            #expect(event.schemeIdentifier == EventMessageBox.id3Scheme && !event.isDelta && event.presentationTime == UInt64(index) * 18_000)
            let id3 = try #require(TimedMetadataReader.id3Frames(event.message))
            #expect(id3.private[ID3MetadataTag.ownerIdentifier] == frames[index].metadata.bytes)
            #expect(id3.text[ID3MetadataTag.captureTimeDescription] == frames[index].wallClock.iso8601)
        }
        #expect(TimedMetadataReader.id3Frames(Array("not a tag".utf8)) == nil)
    }

    @Test func mutagenReadsEachFramesMetadataFromItsEventMessage() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cmaf-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frames = try writeStream(to: path)
        let read = try await ChildProcess.run("/usr/bin/python3", [TestFixtures.emsgReader, path])
        #expect(read.status == 0, "\(read.standardError)")
        let events = try read.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events.count == 10)
        for (index, event) in events.enumerated() {
            #expect(event["version"] as? Int == 1 && event["scheme"] as? String == EventMessageBox.id3Scheme)
            #expect(event["timescale"] as? Int == 90_000 && event["time"] as? Int == index * 18_000 && event["id"] as? Int == index)
            #expect(event["id3version"] as? [Int] == [2, 4, 0])
            let priv = event["priv"] as? [String: String]
            #expect(priv?[ID3MetadataTag.ownerIdentifier] == frames[index].metadata.bytes.map { String(format: "%02x", $0) }.joined())
            let text = event["txxx"] as? [String: String]
            #expect(text?[ID3MetadataTag.metadataDescription] == (index == 3 ? nil : "slide \(index)"), "\(event)")
            #expect(text?[ID3MetadataTag.captureTimeDescription] == frames[index].wallClock.iso8601)
        }
    }
}
