import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenWire

/// Where one stream's frames go in HLS: CMAF segments that each start at a keyframe, cut into parts of a few
/// frames that need none (LL-HLS), every frame an `emsg` with its metadata as ID3 followed by its fragment. The
/// frames are packaged as they arrive, never re-encoded; each is held until the next one comes (its duration is
/// the gap between them).
///
/// A segment takes the stream's own keyframes: one that comes once the open segment is half its length starts
/// the next. Only when none has come by its length does it ask the publisher for one (at most once a second),
/// so while HLS is read the live viewers get one keyframe a segment at most. Any keyframe starts a part, which
/// players may start from. When no frame comes for half a part (an idle screen sends nothing), it asks the
/// publisher for a refresh — the unchanged picture as a delta, a few bytes — so that parts keep coming.
///
/// A value: the packager calls it on its queue and tells it the time (seconds of a monotonic clock).
struct HLSSegmenter {
    struct Settings: Sendable {
        var segmentSeconds: Double
        var partSeconds: Double
        /// `#EXT-X-TARGETDURATION`: a segment whose keyframe is this late is split without one.
        var targetDuration: Int
        var maximumSegmentBytes: Int
        /// The length of the first ``startSegments`` segments: a playlist that starts with two short ones can be
        /// played at once by every player (GStreamer 1.22's hlsdemux2 cannot follow a live playlist whose first
        /// answer lists only one segment), for two keyframes more when HLS starts.
        var startSegmentSeconds = 1.0
        static let startSegments = 2
    }

    enum Output {
        /// A new initialization segment (the first, or the picture size or format changed).
        case initialization(index: Int, bytes: [UInt8], format: CodedVideoFormat, width: Int, height: Int, framesPerSecond: Double)
        case opened(HLSSnapshot.OpenSegment)
        case part(HLSSnapshot.Part)
        case closed(HLSSnapshot.Segment)
        /// The open segment outgrew its byte bound: it ends where it is, and the frames up to the next keyframe
        /// are left out.
        case cutAtByteBound
        case askKeyframe
        case askRefresh
    }

    private struct Held {
        var buffer: ByteBuffer
        var header: MediaFrameHeader
        var ticks: Int64
        var arrivedAt: Double
    }

    private struct Open {
        var segment: HLSSnapshot.OpenSegment
        var startTicks: Int64
        var independent: Bool
        var openedAt: Double
        /// The bytes of its closed parts.
        var bytes: [UInt8] = []
        var partIndex = 0
        var partBytes: [UInt8] = []
        var partStartTicks: Int64
        var partEndTicks: Int64
        var partIndependent = false
    }

    let settings: Settings
    private var writer: FragmentedMP4Writer?
    /// The format ``writer`` describes: a keyframe that declares another chroma, profile or H.264 parameter sets
    /// starts a new one.
    private var writerFormat = CodedVideoFormat(codec: .vp9)
    private var initialization = -1
    private var origin: MediaTime?
    private var held: Held?
    private var streamId: UInt32?
    private var open: Open?
    private var nextSequence = 0
    private var eventId: UInt32 = 0
    /// A segment was cut at its byte bound: the next one, at a keyframe, follows a gap.
    private var gapBeforeNext = false
    private var lastKeyframeRequest: Double?
    private var lastRefreshRequest: Double?
    /// How long after the last refresh request the next may go: half a part, doubled each time none is answered
    /// (a paused or stalled publisher) up to ``longestRefreshWait``; back to half a part when a frame comes.
    private var refreshWait: Double?
    static let longestRefreshWait = 2.0

    init(settings: Settings) { self.settings = settings }

    private static let timescale = Int64(FragmentedMP4Writer.timescale)
    private var partTicks: Int64 { Int64(saturating: settings.partSeconds * Double(Self.timescale)) }
    /// How long the open segment is to be: short while HLS starts.
    private var segmentSeconds: Double {
        nextSequence < Settings.startSegments ? min(settings.startSegmentSeconds, settings.segmentSeconds) : settings.segmentSeconds
    }

    /// Packages one frame of the stream (the relay's shared buffer: not copied) that arrived at `now`.
    mutating func frame(_ buffer: ByteBuffer, header: MediaFrameHeader, framesPerSecond: Double, now: Double) -> [Output] {
        var out: [Output] = []
        let switched = streamId.map { $0 != header.streamID } ?? false
        let format = header.codedFormat(in: buffer)
        let changed = switched || (writer.map {
            $0.codec != header.codec || $0.width != header.width || $0.height != header.height
                || format.map {
                    // H.264's parameter sets are the init segment's `avcC`: others (a new level, a new size) need a new one.
                    $0.chroma != writerFormat.chroma || $0.profile != writerFormat.profile || $0.parameterSets != writerFormat.parameterSets
                } ?? false
        } ?? true)
        if changed && !header.isKeyframe {
            // Nothing can start before a keyframe (the first, of a new stream, or at a new size).
            askKeyframe(now: now, &out)
            return out
        }
        streamId = header.streamID
        if switched, let held {
            // Another stream (a publisher that came back, or another one): its clock may be another machine's.
            // The timeline goes on from the end of the last frame, after a discontinuity.
            let end = held.ticks &+ Int64(saturating: Double(Self.timescale) / max(framesPerSecond, 1))
            origin = header.captureTime - MediaTime(value: end, timescale: FragmentedMP4Writer.timescale)
        }
        let ticks = max(ticks(header.captureTime), (held?.ticks ?? -1) &+ 1)
        if !header.isKeyframe, let current = open {
            // A segment ends by then, so that its duration, rounded, stays within the target duration (RFC 8216
            // 4.3.3.1); a held frame that spans past it (a publisher silent for long) is shortened to fit.
            let end = min(ticks, current.startTicks &+ Int64(settings.targetDuration) &* Self.timescale &+ Self.timescale * 49 / 100)
            let segmentBytes = current.bytes.count + current.partBytes.count + (held?.buffer.readableBytes ?? 0) + buffer.readableBytes
            if segmentBytes > settings.maximumSegmentBytes {
                // More than a segment may hold: the frames up to the next keyframe are left out, after a gap.
                writeHeldFrame(until: end, framesPerSecond: framesPerSecond, &out)
                closeSegment(at: end, &out)
                held = nil
                gapBeforeNext = true
                out.append(.cutAtByteBound)
                askKeyframe(now: now, &out)
                return out
            }
            if Double(ticks &- current.startTicks) / Double(Self.timescale) >= Double(settings.targetDuration) {
                // The keyframe asked for is late (a busy publisher) or never comes: the segment ends and the next
                // goes on from this frame, so no picture is lost.
                writeHeldFrame(until: end, framesPerSecond: framesPerSecond, &out)
                closeSegment(at: end, &out)
                startSegment(at: ticks, header: header, discontinuity: false, independent: false, now: now, &out)
                askKeyframe(now: now, &out)
                held = Held(buffer: buffer, header: header, ticks: ticks, arrivedAt: now)
                return out
            }
        }
        writeHeldFrame(until: ticks, framesPerSecond: framesPerSecond, &out)
        if header.isKeyframe {
            let halfSegment = Int64(saturating: Double(Self.timescale) * segmentSeconds / 2)
            if changed || open.map({ !$0.independent || ticks &- $0.startTicks >= halfSegment }) ?? true {
                closeSegment(at: ticks, &out)
                if changed {
                    guard startInitialization(header, format: format, framesPerSecond: framesPerSecond, &out) else { return out }
                }
                startSegment(
                    at: ticks, header: header, discontinuity: (changed && initialization > 0) || gapBeforeNext, independent: true, now: now,
                    &out)
                gapBeforeNext = false
                lastKeyframeRequest = nil
            } else {
                // A keyframe within the segment (a viewer's): it starts a part, where a player may start.
                closePart(&out)
            }
        }
        held = Held(buffer: buffer, header: header, ticks: ticks, arrivedAt: now)
        refreshWait = nil
        if let current = open, Double(ticks &- current.startTicks) >= Double(Self.timescale) * segmentSeconds {
            askKeyframe(now: now, &out)
        }
        return out
    }

    /// What the time asks for when no frame comes: the segment's keyframe once it is due, a refresh once the
    /// held frame has waited half a part for the next one (and again, ever later, while none comes).
    mutating func tick(now: Double) -> [Output] {
        var out: [Output] = []
        guard let current = open else { return out }
        if now - current.openedAt >= segmentSeconds { askKeyframe(now: now, &out) }
        let refreshAfter = max(0.1, settings.partSeconds / 2)
        let wait = refreshWait ?? refreshAfter
        if let held, now - held.arrivedAt >= refreshAfter, lastRefreshRequest.map({ now - $0 >= wait || $0 < held.arrivedAt }) ?? true {
            lastRefreshRequest = now
            refreshWait = refreshWait.map { min($0 * 2, Self.longestRefreshWait) } ?? refreshAfter * 2
            out.append(.askRefresh)
        }
        return out
    }

    // MARK: Parts and segments

    private mutating func ticks(_ time: MediaTime) -> Int64 {
        let origin = origin ?? time
        self.origin = origin
        return (time - origin).converted(to: FragmentedMP4Writer.timescale).value
    }

    /// A new writer for a keyframe of another size or format; false if the muxer cannot describe it.
    private mutating func startInitialization(
        _ header: MediaFrameHeader, format: CodedVideoFormat?, framesPerSecond: Double, _ out: inout [Output]
    ) -> Bool {
        writerFormat = format ?? CodedVideoFormat(codec: header.codec)
        do {
            let made = try FragmentedMP4Writer(
                codec: header.codec, width: header.width, height: header.height, framesPerSecond: framesPerSecond, format: writerFormat,
                h264Timing: Self.h264Timing(partSeconds: settings.partSeconds, framesPerSecond: framesPerSecond))
            writer = made
            initialization += 1
            out.append(.initialization(
                index: initialization, bytes: made.initializationSegment, format: writerFormat, width: header.width, height: header.height,
                framesPerSecond: framesPerSecond))
            return true
        } catch {
            writer = nil
            return false
        }
    }

    /// The timing H.264's sequence parameter sets get here: a frame lasts the longest one waits for the next while
    /// HLS is read (a refresh is asked for half a part after it, and comes with one of the publisher's next captures),
    /// a part and a frame interval. GStreamer's h264parse (WebKitGTK's Media Source Extensions) takes every frame to
    /// last that long, whatever the MP4 samples say: shorter, the buffered ranges would have a gap after each frame
    /// the screen was still, and WebKit drops what follows a gap of over twice the longest frame until a keyframe
    /// (MSE's coded frame processing). Longer overlaps the next frame, which only the newest one's end overstates.
    static func h264Timing(partSeconds: Double, framesPerSecond: Double) -> H264Timing {
        H264Timing(frameSeconds: partSeconds + 1 / max(framesPerSecond, 1))
    }

    /// Opens a segment whose first frame (`header`) is at `ticks`.
    private mutating func startSegment(
        at ticks: Int64, header: MediaFrameHeader, discontinuity: Bool, independent: Bool, now: Double, _ out: inout [Output]
    ) {
        let segment = HLSSnapshot.OpenSegment(
            sequence: nextSequence, programDateTime: WallClockTime(millisecondsSince1970: header.wallClockMilliseconds),
            initialization: initialization, discontinuity: discontinuity)
        open = Open(segment: segment, startTicks: ticks, independent: independent, openedAt: now, partStartTicks: ticks, partEndTicks: ticks)
        out.append(.opened(segment))
    }

    /// Writes the held frame into the open part, now that the next one's time (`until`) gives its duration. A
    /// part ends before a frame that would take it past the part's length, and after one that leaves no room for
    /// the next (half a frame interval).
    private mutating func writeHeldFrame(until ticks: Int64, framesPerSecond: Double, _ out: inout [Output]) {
        guard let frame = held, let writer, open != nil else { return }
        held = nil
        let duration = max(1, ticks &- frame.ticks)
        if let current = open, !current.partBytes.isEmpty, frame.ticks &+ duration &- current.partStartTicks > partTicks { closePart(&out) }
        eventId &+= 1
        let message = EventMessageBox(
            timescale: UInt32(FragmentedMP4Writer.timescale), presentationTime: UInt64(clamping: frame.ticks), duration: UInt32(clamping: duration),
            identifier: eventId,
            message: ID3MetadataTag(metadata: frame.header.metadata, wallClock: WallClockTime(millisecondsSince1970: frame.header.wallClockMilliseconds)).bytes)
        let fragment: [UInt8]
        do {
            fragment = try frame.buffer.withUnsafeReadableBytes { bytes throws(RecordingError) in
                let range: Range<Int>
                do { range = try MediaFrameHeader.parse(bytes).payload } catch { throw RecordingError(.writeFailed, "\(error)") }
                return try writer.fragment(
                    payload: UnsafeRawBufferPointer(rebasing: bytes[range]), isKeyframe: frame.header.isKeyframe, time: frame.ticks, duration: duration)
            }
        } catch {
            // A frame the muxer refuses is left out; the next keyframe starts cleanly.
            return
        }
        guard var current = open else { return }
        if current.partBytes.isEmpty {
            current.partStartTicks = frame.ticks
            current.partIndependent = frame.header.isKeyframe
        }
        current.partBytes += message.bytes
        current.partBytes += fragment
        current.partEndTicks = frame.ticks &+ duration
        open = current
        let halfFrame = Int64(saturating: Double(Self.timescale) / max(framesPerSecond, 1) / 2)
        if current.partEndTicks &- current.partStartTicks >= partTicks &- halfFrame { closePart(&out) }
    }

    /// Ends the open part, if it holds a frame.
    private mutating func closePart(_ out: inout [Output]) {
        guard var current = open, !current.partBytes.isEmpty else { return }
        let offset = (current.partStartTicks &- current.startTicks) / (Self.timescale / 1000)
        let part = HLSSnapshot.Part(
            segment: current.segment.sequence, index: current.partIndex,
            start: WallClockTime(millisecondsSince1970: current.segment.programDateTime.millisecondsSince1970 &+ offset),
            duration: Double(current.partEndTicks &- current.partStartTicks) / Double(Self.timescale), independent: current.partIndependent,
            bytes: current.partBytes)
        current.bytes += current.partBytes
        current.partBytes = []
        current.partIndex += 1
        current.partStartTicks = current.partEndTicks
        open = current
        out.append(.part(part))
    }

    /// Ends the open segment at `ticks` (its last part with it).
    private mutating func closeSegment(at ticks: Int64, _ out: inout [Output]) {
        closePart(&out)
        guard let current = open else { return }
        open = nil
        // A segment that never got a frame was never listed with anything in it: its number is used again.
        guard !current.bytes.isEmpty else { return }
        out.append(.closed(HLSSnapshot.Segment(
            sequence: current.segment.sequence, duration: Double(ticks &- current.startTicks) / Double(Self.timescale),
            programDateTime: current.segment.programDateTime, initialization: current.segment.initialization,
            discontinuity: current.segment.discontinuity, independent: current.independent, bytes: current.bytes)))
        nextSequence += 1
    }

    /// At most once a second: the publisher answers within a frame or two.
    private mutating func askKeyframe(now: Double, _ out: inout [Output]) {
        if let last = lastKeyframeRequest, now - last < 1 { return }
        lastKeyframeRequest = now
        out.append(.askKeyframe)
    }
}
