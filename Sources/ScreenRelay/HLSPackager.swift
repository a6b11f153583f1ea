import Dispatch
import Foundation
import ScreenTransport
import Logging
import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenWire
import Synchronization

/// Live HLS of one screen stream, packaged as its frames arrive (never re-encoded): CMAF segments of about
/// ``Configuration/segmentSeconds`` that each start at a keyframe, every frame preceded by an `emsg` with its
/// metadata as ID3, a sliding window of segments in memory, and the playlists that name them.
///
/// Segments end at keyframes, so the packager asks the publisher for one (`requestKeyframe`) as each segment
/// comes due, by the relay's clock: an idle screen, which sends nothing, answers with its unchanged picture, so
/// the timeline never stalls. Each frame is held until the next arrives (its duration is the gap between them).
///
/// Frames are packaged on a serial queue of its own; what HTTP requests read (segments, playlists) is a
/// snapshot behind a lock.
final class HLSPackager: @unchecked Sendable {
    // @unchecked: everything under "Packaging" is touched only on `queue`; `published` and `accountedBytes` are
    // Mutexes; the rest is immutable or atomic.

    struct Configuration: Sendable {
        var segmentSeconds = 2.0
        /// The playlist stops being packaged this long after the last request for it (not while it is
        /// written to a directory).
        var idleSeconds = 60.0
        /// `--hls-dir`: also written to `directory/{session}/`, and packaged for as long as the stream lasts.
        var directory: String?
        /// `--hls-push`: also sent to `pushURL/{session}/` (PUT and DELETE), and packaged for as long as the stream lasts.
        var pushURL: String?
        var pushClient: (any HTTPUploader)?
        /// Written out somewhere: packaged whether or not anyone asks the relay.
        var isWrittenOut: Bool { directory != nil || pushURL != nil }
        /// Where a failure to write the directory is said (once).
        var logger: Logger?
        /// A segment's largest size: a segment that would grow past it (a publisher sending huge frames, or none
        /// of the keyframes asked for) is closed where it is, and the frames up to the next keyframe are left out
        /// of HLS (a discontinuity). 16 MiB: twice the largest frame; MediaMTX caps its segments at 50 MB.
        var maximumSegmentBytes = 16 << 20
        /// What one session's HLS may hold in memory (listed and retired segments): past it the oldest go first,
        /// down to the newest segment. And the relay's budget for every session's.
        var sessionMemoryBytes = 64 << 20
        var relayMemory = HLSMemoryBudget()
        /// Counts what the bounds cut (`hls_segment`, `hls_memory`).
        var metrics: RelayMetrics?

        /// `#EXT-X-TARGETDURATION`: no segment may be longer, rounded. Segments end at the first keyframe after
        /// they come due, which a publisher sends within a frame or two of being asked.
        var targetDuration: Int { Int((segmentSeconds * 1.5).rounded(.up)) }
        /// Segments listed: at least three target durations of media, as RFC 8216 asks of a live playlist.
        var windowSegments: Int { max(6, Int((3.0 * Double(targetDuration) / segmentSeconds).rounded(.up)) + 2) }
    }

    struct Segment: Sendable {
        let sequence: Int
        let duration: Double
        /// The wall-clock capture time of its first frame.
        let programDateTime: WallClockTime
        let initialization: Int
        /// A new initialization segment starts here (the picture size or codec changed).
        let discontinuity: Bool
        /// It starts at a keyframe. Only a segment split at the target duration while the publisher's keyframe
        /// was late does not: its frames go on from the previous segment's.
        let independent: Bool
        let bytes: [UInt8]
    }

    /// An `EXT-X-DATERANGE`: a session event (pause, a recording) or a posted marker.
    struct DateRange: Sendable, Equatable {
        var id: String
        var className: String
        var start: WallClockTime
        var end: WallClockTime?
        /// Client attributes (`X-…`) and SCTE-35 ones, with their values as written (quoted strings or hex).
        var attributes: [String: String] = [:]
    }

    /// The stream as it can be served.
    struct Snapshot: Sendable {
        var segments: [Segment] = []
        /// Segments that left the playlist lately: still served for a window's length, as RFC 8216 asks (a
        /// player that read an older playlist may still fetch them).
        var retired: [Segment] = []
        var initializations: [Int: [UInt8]] = [:]
        var dateRanges: [DateRange] = []
        /// Discontinuities that slid out of the window (`#EXT-X-DISCONTINUITY-SEQUENCE`).
        var discontinuitiesBefore = 0
        /// What the stream's keyframes declare (its codec string names the profile, the level and the chroma).
        var format = CodedVideoFormat(codec: .vp9)
        var width = 0
        var height = 0
        var framesPerSecond = 0.0

        /// Takes the oldest listed segment out of the playlist, counting its discontinuity as gone before it.
        mutating func removeOldestSegment() -> Segment {
            let gone = segments.removeFirst()
            if gone.discontinuity { discontinuitiesBefore += 1 }
            return gone
        }

        /// Keeps the latest ``HLSPackager/maximumDateRanges`` date ranges.
        mutating func keepLatestDateRanges() {
            if dateRanges.count > HLSPackager.maximumDateRanges { dateRanges.removeFirst(dateRanges.count - HLSPackager.maximumDateRanges) }
        }
    }

    let configuration: Configuration
    static let maximumDateRanges = 64
    private let queue: DispatchQueue
    private let requestKeyframe: @Sendable () -> Void
    private let published = Mutex(Snapshot())
    private let lastRequest = Mutex(ContinuousClock.now)
    private let timer: any DispatchSourceTimer
    private let firstSegment = OneShotEvent()
    private let outputs: [any HLSOutput]
    private var failedOutputs: Set<String> = []

    // MARK: Packaging (on `queue`)
    private var writer: FragmentedMP4Writer?
    /// The format ``writer`` describes: a keyframe that declares another chroma or profile starts a new one.
    private var writerFormat = CodedVideoFormat(codec: .vp9)
    private var initialization = -1
    private var origin: MediaTime?
    private var held: (buffer: ByteBuffer, header: MediaFrameHeader, ticks: Int64)?
    private var streamId: UInt32?
    private var current: (bytes: [UInt8], startTicks: Int64, start: WallClockTime, discontinuity: Bool, independent: Bool, dueAt: ContinuousClock.Instant)?
    private var lastKeyframeRequest: ContinuousClock.Instant?
    private var nextSequence = 0
    private var eventId: UInt32 = 0
    /// A segment was cut at its bound: the next one, at a keyframe, follows a gap.
    private var gapBeforeNext = false
    /// This packager's share of ``Configuration/relayMemory``.
    private let accountedBytes = Mutex(0)

    init(configuration: Configuration, label: String, requestKeyframe: @escaping @Sendable () -> Void, onIdle: @escaping @Sendable () -> Void) {
        self.configuration = configuration
        self.requestKeyframe = requestKeyframe
        var outputs: [any HLSOutput] = []
        if let directory = configuration.directory {
            do {
                outputs.append(try HLSDirectory(root: directory, sessionId: label))
            } catch {
                configuration.logger?.error("HLS of session \(label) is not written to disk: \(error)")
            }
        }
        if let url = configuration.pushURL, let client = configuration.pushClient {
            outputs.append(HLSPush(url: url, sessionId: label, client: client, logger: configuration.logger))
        }
        self.outputs = outputs
        queue = DispatchQueue(label: "screenrelay.hls.\(label)")
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            if !configuration.isWrittenOut, ContinuousClock.now - self.lastRequest.withLock({ $0 }) > .seconds(configuration.idleSeconds) {
                onIdle()
            } else {
                self.askForKeyframeIfDue()
            }
        }
        timer.resume()
        requestKeyframe()
    }

    deinit {
        timer.cancel()
        releaseMemory()
    }

    func stop() {
        timer.cancel()
        releaseMemory()
    }

    private func releaseMemory() {
        accountedBytes.withLock { accounted in
            _ = configuration.relayMemory.update(from: accounted, to: 0)
            accounted = 0
        }
    }

    /// A request for the stream: packaging goes on for ``Configuration/idleSeconds`` after the last one.
    func touch() { lastRequest.withLock { $0 = .now } }

    /// Packages one frame of the stream (the relay's shared buffer: not copied).
    func frame(_ buffer: ByteBuffer, header: MediaFrameHeader, framesPerSecond: Double) {
        queue.async { self.package(buffer, header: header, framesPerSecond: framesPerSecond) }
    }

    /// Adds or completes an `EXT-X-DATERANGE` (a range with the same id gets its end, or new attributes).
    func dateRange(_ range: DateRange) {
        published.withLock { snapshot in
            if let index = snapshot.dateRanges.firstIndex(where: { $0.id == range.id }) {
                snapshot.dateRanges[index].end = snapshot.dateRanges[index].end ?? range.end
                snapshot.dateRanges[index].attributes.merge(range.attributes) { old, _ in old }
            } else {
                snapshot.dateRanges.append(range)
                // Bounded as they come, not only when a segment closes: markers can be posted faster than that.
                snapshot.keepLatestDateRanges()
            }
        }
    }

    /// Closes the open `EXT-X-DATERANGE` with this id at `end`.
    func endDateRange(id: String, at end: WallClockTime) {
        published.withLock { snapshot in
            if let index = snapshot.dateRanges.firstIndex(where: { $0.id == id && $0.end == nil }) { snapshot.dateRanges[index].end = end }
        }
    }

    var snapshot: Snapshot { published.withLock { $0 } }

    /// Waits until the first segment is complete (a player's first request), or `timeout`; whether it is.
    func waitForFirstSegment(timeout: Duration) async -> Bool {
        await firstSegment.wait(upTo: timeout)
        return !published.withLock { $0.segments.isEmpty }
    }

    // MARK: Packaging

    private func ticks(_ time: MediaTime) -> Int64 {
        let origin = origin ?? time
        self.origin = origin
        return (time - origin).converted(to: FragmentedMP4Writer.timescale).value
    }

    private func package(_ buffer: ByteBuffer, header: MediaFrameHeader, framesPerSecond: Double) {
        let switched = streamId.map { $0 != header.streamID } ?? false
        let format = header.codedFormat(in: buffer)
        let changed = switched || (writer.map {
            $0.codec != header.codec || $0.width != header.width || $0.height != header.height
                || format.map { $0.chroma != writerFormat.chroma || $0.profile != writerFormat.profile } ?? false
        } ?? true)
        if changed && !header.isKeyframe {
            // Nothing can start before a keyframe (the first, of a new stream, or at a new size).
            askForKeyframe()
            return
        }
        streamId = header.streamID
        if switched, let held {
            // Another stream (a publisher that came back, or another one): its clock may be another machine's.
            // The timeline goes on from the end of the last frame, after a discontinuity.
            let end = held.ticks &+ Int64(saturating: Double(FragmentedMP4Writer.timescale) / max(framesPerSecond, 1))
            origin = header.captureTime - MediaTime(value: end, timescale: FragmentedMP4Writer.timescale)
        }
        let ticks = max(ticks(header.captureTime), (held?.ticks ?? -1) &+ 1)
        if !header.isKeyframe, let open = current {
            // A segment ends by then, so that its duration, rounded, stays within the target duration (RFC 8216
            // 4.3.3.1); a held frame that spans past it (a publisher silent for long) is shortened to fit.
            let timescale = Int64(FragmentedMP4Writer.timescale)
            let end = min(ticks, open.startTicks &+ Int64(configuration.targetDuration) * timescale &+ timescale * 49 / 100)
            switch bound(open.bytes.count, startedAt: open.startTicks, adding: buffer.readableBytes, at: ticks) {
            case .bytes:
                // More than a segment may hold: the frames up to the next keyframe are left out, after a gap.
                writeHeldFrame(until: end)
                closeSegment(at: end)
                current = nil
                held = nil
                gapBeforeNext = true
                configuration.metrics?.refused(.hlsSegmentSize)
                askForKeyframe()
                return
            case .duration:
                // The keyframe asked for is late (a busy publisher) or never comes: the segment ends and the next
                // goes on from this frame, so no picture is lost.
                writeHeldFrame(until: end)
                closeSegment(at: end)
                startSegment(at: ticks, header: header, discontinuity: false, independent: false)
                askForKeyframe()
                held = (buffer, header, ticks)
                return
            case nil:
                break
            }
        }
        writeHeldFrame(until: ticks)
        // A keyframe starts a segment once the open one is half its length, or at once if the open one is not independent.
        if header.isKeyframe, changed || current.map({
            !$0.independent || Double(ticks - $0.startTicks) >= Double(FragmentedMP4Writer.timescale) * configuration.segmentSeconds / 2
        }) ?? true {
            closeSegment(at: ticks)
            if changed {
                writerFormat = format ?? CodedVideoFormat(codec: header.codec)
                do {
                    writer = try FragmentedMP4Writer(
                        codec: header.codec, width: header.width, height: header.height, framesPerSecond: framesPerSecond,
                        format: writerFormat)
                } catch {
                    writer = nil
                    return
                }
                initialization += 1
                let (index, bytes) = (initialization, writer!.initializationSegment)
                published.withLock { snapshot in
                    snapshot.initializations[index] = bytes
                    (snapshot.format, snapshot.width, snapshot.height, snapshot.framesPerSecond) = (writerFormat, header.width, header.height, framesPerSecond)
                }
            }
            startSegment(at: ticks, header: header, discontinuity: (changed && initialization > 0) || gapBeforeNext, independent: true)
            gapBeforeNext = false
            lastKeyframeRequest = nil
        }
        held = (buffer, header, ticks)
    }

    /// Opens a segment whose first frame (`header`) is at `ticks`.
    private func startSegment(at ticks: Int64, header: MediaFrameHeader, discontinuity: Bool, independent: Bool) {
        current = (
            [], ticks, WallClockTime(millisecondsSince1970: header.wallClockMilliseconds), discontinuity, independent,
            .now + .milliseconds(Int(configuration.segmentSeconds * 1000))
        )
    }

    private enum SegmentBound { case bytes, duration }

    /// Which bound the open segment (`segmentBytes` so far, started at `startTicks`), with the held frame and one
    /// more of `bytes` at `ticks`, would pass: its byte cap or its target duration (nil: neither).
    private func bound(_ segmentBytes: Int, startedAt startTicks: Int64, adding bytes: Int, at ticks: Int64) -> SegmentBound? {
        if segmentBytes + (held?.buffer.readableBytes ?? 0) + bytes > configuration.maximumSegmentBytes { return .bytes }
        let seconds = Double(ticks &- startTicks) / Double(FragmentedMP4Writer.timescale)
        return seconds >= Double(configuration.targetDuration) ? .duration : nil
    }

    /// Writes the held frame, now that the next one's time (`until`) gives its duration.
    private func writeHeldFrame(until ticks: Int64) {
        guard let held, let writer, current != nil else { return }
        self.held = nil
        let duration = max(1, ticks - held.ticks)
        eventId &+= 1
        let message = EventMessageBox(
            timescale: UInt32(FragmentedMP4Writer.timescale), presentationTime: UInt64(clamping: held.ticks), duration: UInt32(clamping: duration),
            identifier: eventId,
            message: ID3MetadataTag(metadata: held.header.metadata, wallClock: WallClockTime(millisecondsSince1970: held.header.wallClockMilliseconds)).bytes)
        do {
            let fragment = try held.buffer.withUnsafeReadableBytes { bytes throws(RecordingError) in
                let range: Range<Int>
                do { range = try MediaFrameHeader.parse(bytes).payload } catch { throw RecordingError(.writeFailed, "\(error)") }
                return try writer.fragment(
                    payload: UnsafeRawBufferPointer(rebasing: bytes[range]), isKeyframe: held.header.isKeyframe, time: held.ticks, duration: duration)
            }
            current?.bytes += message.bytes
            current?.bytes += fragment
        } catch {
            // A frame the muxer refuses is left out; the next keyframe starts cleanly.
        }
    }

    private func closeSegment(at ticks: Int64) {
        guard let segment = current, !segment.bytes.isEmpty else { return }
        current = nil
        let closed = Segment(
            sequence: nextSequence, duration: Double(ticks - segment.startTicks) / Double(FragmentedMP4Writer.timescale),
            programDateTime: segment.start, initialization: initialization, discontinuity: segment.discontinuity,
            independent: segment.independent, bytes: segment.bytes)
        nextSequence += 1
        let window = configuration.windowSegments
        published.withLock { snapshot in
            snapshot.segments.append(closed)
            while snapshot.segments.count > window { snapshot.retired.append(snapshot.removeOldestSegment()) }
            if snapshot.retired.count > window { snapshot.retired.removeFirst(snapshot.retired.count - window) }
            // Initialization segments and date ranges that no served segment needs any more go too.
            let oldest = snapshot.segments.first!
            let oldestInitialization = snapshot.retired.first?.initialization ?? oldest.initialization
            snapshot.initializations = snapshot.initializations.filter { $0.key >= oldestInitialization }
            snapshot.dateRanges.removeAll { range in
                let end = range.end ?? range.attributes["DURATION"].flatMap(Double.init).map {
                    WallClockTime(millisecondsSince1970: range.start.millisecondsSince1970.addingReportingOverflow(Int64(saturating: $0 * 1000)).partialValue)
                }
                return end.map { $0 < oldest.programDateTime } ?? false
            }
            // Ranges with no end (a marker without a duration) are listed while they are among the latest.
            snapshot.keepLatestDateRanges()
            keepWithinMemory(&snapshot)
        }
        if closed.sequence == 0 { firstSegment.signal() }
        for output in outputs where !failedOutputs.contains(output.destination) {
            do {
                try output.publish(snapshot, targetDuration: configuration.targetDuration, window: configuration.windowSegments)
            } catch {
                failedOutputs.insert(output.destination)
                configuration.logger?.error("HLS stops being written to \(output.destination): \(error); the relay still serves it")
            }
        }
    }

    /// Drops the oldest segments, retired ones first, until the session's HLS is within its own budget and the
    /// relay's; the newest segment stays unless the relay's budget has no room even for it.
    private func keepWithinMemory(_ snapshot: inout Snapshot) {
        var total = snapshot.segments.reduce(0) { $0 + $1.bytes.count } + snapshot.retired.reduce(0) { $0 + $1.bytes.count }
        var shed = false
        func dropOldest() {
            total -= (snapshot.retired.isEmpty ? snapshot.removeOldestSegment() : snapshot.retired.removeFirst()).bytes.count
            shed = true
        }
        while total > configuration.sessionMemoryBytes, snapshot.retired.count + snapshot.segments.count > 1 { dropOldest() }
        accountedBytes.withLock { accounted in
            var over = configuration.relayMemory.update(from: accounted, to: total)
            accounted = total
            while over > 0, !(snapshot.retired.isEmpty && snapshot.segments.isEmpty) {
                let before = total
                dropOldest()
                over = configuration.relayMemory.update(from: before, to: total)
                accounted = total
            }
        }
        if shed {
            configuration.metrics?.refused(.hlsMemory)
            configuration.logger?.notice("HLS dropped its oldest segments to stay within its memory budget (\(configuration.sessionMemoryBytes >> 20) MiB a session, \(configuration.relayMemory.limit >> 20) MiB in all)")
        }
    }

    private func askForKeyframeIfDue() {
        guard let current, ContinuousClock.now >= current.dueAt - .milliseconds(250) else { return }
        askForKeyframe()
    }

    /// At most once a second: the publisher answers within a frame or two.
    private func askForKeyframe() {
        if let last = lastKeyframeRequest, ContinuousClock.now - last < .seconds(1) { return }
        lastKeyframeRequest = .now
        requestKeyframe()
    }
}

