import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

@testable import ScreenRelay

/// Where parts and segments begin and end, fed real VP9 frames at 5 fps with the time told: parts need no
/// keyframe, segments take the stream's own and ask only when none came, an idle screen is asked for refreshes.
@Suite struct HLSSegmenterTests {
    /// The defaults, past the start (its short segments are tested on their own).
    static let settings = HLSSegmenter.Settings(
        segmentSeconds: 6, partSeconds: 0.5, targetDuration: 8, maximumSegmentBytes: 16 << 20, startSegmentSeconds: 6)

    /// What came out of feeding `frames` (index → keyframe or not from the frames themselves), each at its
    /// capture time on the relay's clock too.
    struct Run {
        var parts: [HLSSnapshot.Part] = []
        var segments: [HLSSnapshot.Segment] = []
        /// The frame index at which each keyframe was asked for.
        var keyframesAsked: [Int] = []
        var refreshesAsked = 0
    }

    static func feed(_ frames: [CollectedFrame], into segmenter: inout HLSSegmenter, run: inout Run, from offset: Int = 0) {
        for (index, (buffer, header)) in HLSPackagerTests.buffers(frames, streamId: 1, start: MediaTime(value: 0, timescale: 1)).enumerated() {
            let now = Double(offset + index) / 5
            var header = header
            header.captureTime = MediaTime(value: Int64(offset + index), timescale: 5)
            note(segmenter.frame(buffer, header: header, framesPerSecond: 5, now: now), index: offset + index, run: &run)
        }
    }

    static func note(_ outputs: [HLSSegmenter.Output], index: Int, run: inout Run) {
        for output in outputs {
            switch output {
            case .part(let part): run.parts.append(part)
            case .closed(let segment): run.segments.append(segment)
            case .askKeyframe: run.keyframesAsked.append(index)
            case .askRefresh: run.refreshesAsked += 1
            case .initialization, .opened, .cutAtByteBound: break
            }
        }
    }

    /// An H.264 keyframe whose parameter sets are not the initialization segment's `avcC` (here its level raised)
    /// starts a new initialization segment; one that repeats them does not.
    @Test func anH264KeyframeWithOtherParameterSetsStartsANewInitialization() throws {
        var frames = try TestMedia.encodedFrames(count: 20, codec: .h264)
        var same = frames[0], other = frames[0]
        (same.captureTime, other.captureTime) = (frames[5].captureTime, frames[12].captureTime)
        // The SPS's level_idc: after its start code, its NAL header (0x67), profile_idc and the constraint flags.
        let sps = try #require(other.payload.firstRange(of: [0, 0, 0, 1, 0x67])).upperBound
        other.payload[sps + 2] &+= 1
        (frames[5], frames[12]) = (same, other)
        var segmenter = HLSSegmenter(settings: Self.settings)
        var levels: [Int] = []
        for (index, (buffer, header)) in HLSPackagerTests.buffers(frames, streamId: 1, start: MediaTime(value: 0, timescale: 1)).enumerated() {
            for case .initialization(_, let bytes, let format, _, _, _) in segmenter.frame(buffer, header: header, framesPerSecond: 5, now: Double(index) / 5) {
                #expect(bytes.firstRange(of: Array("avcC".utf8)) != nil)
                levels.append(format.parameterSets?.level ?? -1)
            }
        }
        let first = try #require(CodedVideoFormat(codec: .h264, keyframe: frames[0].payload)?.parameterSets?.level)
        #expect(levels == [first, first + 1], "\(levels)")
    }

    /// H.264's SPS, in `avcC` and in the keyframes, says a frame lasts a part and a frame interval (0.7 s): the
    /// longest one waits for the next while HLS is read, so that a player that times frames by the SPS alone
    /// (WebKitGTK's, through GStreamer's h264parse) buffers no gap after a still screen's frame.
    @Test func h264SequenceParameterSetsSayAFrameLastsAPartAndAFrameInterval() throws {
        let frames = try TestMedia.encodedFrames(count: 10, codec: .h264)
        var segmenter = HLSSegmenter(settings: Self.settings)
        var (initialization, parts): ([UInt8], [UInt8]) = ([], [])
        for (index, (buffer, header)) in HLSPackagerTests.buffers(frames, streamId: 1, start: MediaTime(value: 0, timescale: 1)).enumerated() {
            for output in segmenter.frame(buffer, header: header, framesPerSecond: 5, now: Double(index) / 5) {
                if case .initialization(_, let bytes, _, _, _, _) = output { initialization += bytes }
                if case .part(let part) = output { parts += part.bytes }
            }
        }
        let sequence = try #require(H264ParameterSets(accessUnit: frames[0].payload)?.sequenceParameterSet)
        let timed = try #require(H264Timing(frameSeconds: 0.7).sequenceParameterSet(sequence))
        #expect(H264Timing(sequenceParameterSet: timed)?.frameSeconds == 0.7)
        #expect(initialization.firstRange(of: timed) != nil && parts.firstRange(of: timed) != nil)
        #expect(initialization.firstRange(of: sequence) == nil && parts.firstRange(of: sequence) == nil)
    }

    @Test func partsNeedNoKeyframeAndASegmentAsksForOneOnlyWhenItIsDue() throws {
        var frames = try TestMedia.encodedFrames(count: 40)
        #expect(frames[0].isKeyframe && frames.dropFirst().allSatisfy { !$0.isKeyframe })
        // The publisher answers the request made at 6 s two frames later.
        frames[32] = try HLSPackagerTests.keyframe(like: frames[32])
        var segmenter = HLSSegmenter(settings: Self.settings)
        var run = Run()
        Self.feed(frames, into: &segmenter, run: &run)

        // Asked once, when the segment reached 6 s, not before (a live viewer pays for no other keyframe).
        #expect(run.keyframesAsked == [30], "\(run.keyframesAsked)")
        // One segment, from the first keyframe to the one answered: 6.4 s, every part in it.
        #expect(run.segments.count == 1)
        let segment = try #require(run.segments.first)
        #expect(abs(segment.duration - 6.4) < 0.001 && segment.independent)
        let parts = run.parts.filter { $0.segment == 0 }
        #expect(abs(parts.reduce(0) { $0 + $1.duration } - 6.4) < 0.001)
        #expect(segment.bytes == parts.flatMap(\.bytes), "a segment is its parts, byte for byte")
        // Parts of two frames (0.4 s: a third would pass 0.5 s), none longer than the part target.
        #expect(parts.allSatisfy { $0.duration <= 0.5 } && parts.dropLast().allSatisfy { abs($0.duration - 0.4) < 0.001 }, "\(parts.map(\.duration))")
        #expect(parts.map(\.index) == Array(0..<parts.count))
        // Only where a keyframe is does a part say it is independent: the first, and the next segment's first.
        #expect(run.parts.map(\.independent) == run.parts.map { $0.index == 0 }, "\(run.parts.map(\.independent))")
        #expect(run.parts.first(where: { $0.segment == 1 })?.independent == true)
        // Each part's frames carry their metadata (an emsg ahead of each), in order.
        let times = parts.flatMap { TimedMetadataReader.events(in: $0.bytes).map(\.presentationTime) }
        #expect(times == (0..<32).map { UInt64($0) * 18_000 })
    }

    @Test func aViewersKeyframeWithinTheSegmentStartsAPartNotASegment() throws {
        var frames = try TestMedia.encodedFrames(count: 20)
        frames[7] = try HLSPackagerTests.keyframe(like: frames[7])  // 1.4 s in: under half a segment
        var segmenter = HLSSegmenter(settings: Self.settings)
        var run = Run()
        Self.feed(frames, into: &segmenter, run: &run)
        #expect(run.segments.isEmpty && run.keyframesAsked.isEmpty)
        let independent = run.parts.filter(\.independent)
        #expect(independent.count == 2, "the first part and the one the viewer's keyframe starts")
        let second = try #require(independent.last)
        #expect(TimedMetadataReader.events(in: second.bytes).first?.presentationTime == 7 * 18_000)
    }

    @Test func aKeyframeOnItsOwnPastHalfTheSegmentStartsTheNextWithoutAnyRequest() throws {
        var frames = try TestMedia.encodedFrames(count: 25)
        frames[20] = try HLSPackagerTests.keyframe(like: frames[20])  // 4 s in
        var segmenter = HLSSegmenter(settings: Self.settings)
        var run = Run()
        Self.feed(frames, into: &segmenter, run: &run)
        #expect(run.keyframesAsked.isEmpty)
        #expect(run.segments.map(\.duration) == [4])
    }

    @Test func hlsStartsWithTwoShortSegmentsThatEveryPlayerCanFollow() throws {
        var frames = try TestMedia.encodedFrames(count: 50)
        // The publisher answers each request one frame later.
        var settings = Self.settings
        settings.startSegmentSeconds = 1
        var segmenter = HLSSegmenter(settings: settings)
        var run = Run()
        for index in frames.indices {
            if run.keyframesAsked.last.map({ $0 == index - 1 }) == true { frames[index] = try HLSPackagerTests.keyframe(like: frames[index]) }
            Self.feed([frames[index]], into: &segmenter, run: &run, from: index)
        }
        // Asked at 1 s and 2.2 s, then at 6 s into the third segment.
        #expect(run.keyframesAsked == [5, 11, 42], "\(run.keyframesAsked)")
        #expect(run.segments.map { ($0.duration * 10).rounded() / 10 } == [1.2, 1.2, 6.2], "\(run.segments.map(\.duration))")
    }

    @Test func anIdleScreenIsAskedForARefreshHalfAPartAfterItsLastFrame() throws {
        let frames = try TestMedia.encodedFrames(count: 2)
        var segmenter = HLSSegmenter(settings: Self.settings)
        var run = Run()
        Self.feed(frames, into: &segmenter, run: &run)  // the last arrived at 0.2 s, and is held
        for tenth in 3...12 { Self.note(segmenter.tick(now: Double(tenth) / 10), index: tenth, run: &run) }
        // Held since 0.2 s: asked once it has waited a quarter second (on the timer's tenths: 0.5 s), then, with no
        // frame coming (a paused publisher), twice as long after each request: 1.0 s, 2.0 s, 4.0 s, then every 2 s.
        #expect(run.refreshesAsked == 2, "\(run.refreshesAsked)")
        var later = Run()
        for tenth in 13...79 { Self.note(segmenter.tick(now: Double(tenth) / 10), index: tenth, run: &later) }
        #expect(later.refreshesAsked == 3, "at 2.0, 4.0 and 6.0 s: \(later.refreshesAsked)")
        // The refresh that comes (a frame at 0.6 s) gives the held frame its duration: the part it would take
        // past 0.5 s ends before it, and it ends one of its own.
        let refresh = try TestMedia.encodedFrames(count: 4)[3]
        Self.feed([refresh], into: &segmenter, run: &run, from: 3)
        #expect(run.parts.map { ($0.duration * 1000).rounded() } == [200, 400], "\(run.parts.map(\.duration))")
    }
}
