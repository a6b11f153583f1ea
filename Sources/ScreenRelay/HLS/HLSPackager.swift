import Dispatch
import Foundation
import ScreenTransport
import Logging
import NIOCore
import ScreenMedia
import ScreenRecording
import ScreenWire
import Synchronization

/// Live HLS of one screen stream: the frames packaged as they arrive (``HLSSegmenter``: segments at keyframes,
/// parts of about ``Configuration/partSeconds`` between them), a sliding window of them in memory, the
/// players' requests that wait for a part (``HLSWaitingRequests``), and the outputs it is written to.
///
/// Frames are packaged on a serial queue of its own; what HTTP requests read (segments, parts, playlists) is a
/// snapshot behind a lock, published after each part.
final class HLSPackager: @unchecked Sendable {
    // @unchecked: `segmenter` and `failedOutputs` are touched only on `queue`; `published`, `lastRequest` and
    // `accountedBytes` are Mutexes; the rest is immutable or Sendable.

    struct Configuration: Sendable {
        /// A segment's length: it takes the stream's own keyframe once it is half this long, and asks for one when
        /// none has come by then. 6 s by default, Apple's advice for HLS: ten keyframes a minute at most for every
        /// viewer of the stream while HLS is read. Defaults here are the relay's (``RelayConfiguration``).
        var segmentSeconds = RelayConfiguration.defaults.hlsSegmentSeconds
        /// A part's length (LL-HLS): a player at the live edge is about two parts behind the frames.
        var partSeconds = RelayConfiguration.defaults.hlsPartSeconds
        /// The playlist stops being packaged this long after the last request for it (not while it is
        /// written to a directory).
        var idleSeconds = RelayConfiguration.defaults.hlsIdleSeconds
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
        /// What one session's HLS may hold in memory (listed and retired segments, parts): past it the oldest go
        /// first, down to the newest segment. And the relay's budget for every session's.
        var sessionMemoryBytes = RelayConfiguration.defaults.hlsSessionMemoryBytes
        var relayMemory = HLSMemoryBudget()
        /// Players' requests one session's HLS lets wait at once for a part not out yet (blocking reloads and
        /// hinted parts); one more is answered 503 at once.
        var maximumWaitingRequests = 500
        /// Counts what the bounds cut (`hls_segment`, `hls_memory`).
        var metrics: RelayMetrics?

        /// `#EXT-X-TARGETDURATION`: no segment may be longer, rounded. A segment asks for its keyframe when due and
        /// the publisher answers within a frame or two; one whose keyframe is later than this is split without one.
        var targetDuration: Int { Int(max(segmentSeconds + 1, segmentSeconds * 1.25).rounded(.up)) }
        /// `PART-HOLD-BACK`: how far from the live edge an LL-HLS player starts, three parts (RFC 8216bis asks at
        /// least two).
        var partHoldBack: Double { 3 * partSeconds }
        /// `CAN-SKIP-UNTIL`: delta playlists leave out the segments older than this (RFC 8216bis: at least six
        /// target durations).
        var skipBoundary: Double { 6 * Double(targetDuration) }
        /// Segments listed: at least three target durations of media, as RFC 8216 asks of a live playlist, and
        /// two segments past the skip boundary, so that a delta playlist leaves something out.
        var windowSegments: Int {
            max(6, Int((3.0 * Double(targetDuration) / segmentSeconds).rounded(.up)) + 2, Int((skipBoundary / segmentSeconds).rounded(.up)) + 2)
        }
        /// How long a blocking request waits for its part: three target durations (RFC 8216bis 6.2.5.2).
        var blockingWait: Duration { .seconds(3 * targetDuration) }
        /// The parts listed: those of the open segment and of the newest closed ones (players start near the live
        /// edge; older media is there as whole segments).
        static let segmentsWithParts = 2
    }

    let configuration: Configuration
    let waiting: HLSWaitingRequests
    private let queue: DispatchQueue
    private let requestKeyframe: @Sendable () -> Void
    private let requestRefresh: @Sendable () -> Void
    private let published = Mutex(HLSSnapshot())
    private let lastRequest = Mutex(ContinuousClock.now)
    private let timer: any DispatchSourceTimer
    private let started = ContinuousClock.now
    private let outputs: [any HLSOutput]
    private var failedOutputs: Set<String> = []
    private var segmenter: HLSSegmenter
    /// This packager's share of ``Configuration/relayMemory``.
    private let accountedBytes = Mutex(0)

    init(
        configuration: Configuration, label: String, requestKeyframe: @escaping @Sendable () -> Void,
        requestRefresh: @escaping @Sendable () -> Void = {}, onIdle: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.requestKeyframe = requestKeyframe
        self.requestRefresh = requestRefresh
        waiting = HLSWaitingRequests(limit: configuration.maximumWaitingRequests)
        segmenter = HLSSegmenter(settings: .init(
            segmentSeconds: configuration.segmentSeconds, partSeconds: configuration.partSeconds,
            targetDuration: configuration.targetDuration, maximumSegmentBytes: configuration.maximumSegmentBytes))
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
        // Ten times a second: a refresh asked for half a part after the last frame is at most this late.
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.waiting.expire(now: .now)
            // Not idle while a request waits (a first request for the first segments, however short the idle time).
            if !configuration.isWrittenOut, self.waiting.count == 0,
                ContinuousClock.now - self.lastRequest.withLock({ $0 }) > .seconds(configuration.idleSeconds)
            {
                onIdle()
            } else {
                self.apply(self.segmenter.tick(now: self.seconds()))
            }
        }
        timer.resume()
        requestKeyframe()
    }

    deinit {
        timer.cancel()
        waiting.stop()
        releaseMemory()
    }

    func stop() {
        timer.cancel()
        waiting.stop()
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
        queue.async {
            self.apply(self.segmenter.frame(buffer, header: header, framesPerSecond: framesPerSecond, now: self.seconds()))
        }
    }

    /// Adds or completes an `EXT-X-DATERANGE` (a range with the same id gets its end, or new attributes).
    func dateRange(_ range: HLSSnapshot.DateRange) {
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

    var snapshot: HLSSnapshot { published.withLock { $0 } }

    /// Waits until the first two segments are complete (a plain player's first request: GStreamer 1.22's
    /// hlsdemux2 cannot follow a live playlist whose first answer lists one), for a few segment durations, in one
    /// of the waiting places (``HLSWaitingRequests``: within `client`'s share, its token's and the variant's).
    func waitUntilPlayable(client: HLSWaitingRequests.Client, clientLimit: Int) async -> HLSWaitingRequests.Outcome {
        defer { touch() }
        let start = HLSSnapshot.Position(segment: HLSSegmenter.Settings.startSegments - 1, part: nil)
        let timeout = Duration.milliseconds(Int((configuration.segmentSeconds * 3 + 10) * 1000))
        return await waiting.wait(for: start, client: client, clientLimit: clientLimit, timeout: timeout) { position in
            self.published.withLock { $0.holds(position) }
        }
    }

    /// Whether the first two segments are there to list.
    var hasStartSegments: Bool { published.withLock { $0.segments.count + $0.retired.count >= HLSSegmenter.Settings.startSegments } }

    /// Waits until `position` is out (a blocking reload, a hinted part), for at most ``Configuration/blockingWait``.
    func wait(for position: HLSSnapshot.Position) async -> HLSWaitingRequests.Outcome {
        await waiting.wait(for: position, timeout: configuration.blockingWait) { position in
            self.published.withLock { $0.holds(position) }
        }
    }

    private func seconds() -> Double { (ContinuousClock.now - started) / .seconds(1) }

    // MARK: Publishing (on `queue`)

    private func apply(_ outputs: [HLSSegmenter.Output]) {
        var changed = false
        var closed: HLSSnapshot.Segment?
        for output in outputs {
            switch output {
            case .initialization(let index, let bytes, let format, let width, let height, let framesPerSecond):
                published.withLock { snapshot in
                    snapshot.initializations[index] = bytes
                    (snapshot.format, snapshot.width, snapshot.height, snapshot.framesPerSecond) = (format, width, height, framesPerSecond)
                }
            case .opened(let segment):
                published.withLock { $0.open = segment }
            case .part(let part):
                published.withLock { snapshot in
                    snapshot.parts.append(part)
                    keepWithinMemory(&snapshot)
                }
                changed = true
            case .closed(let segment):
                publishClosed(segment)
                closed = segment
                changed = true
            case .cutAtByteBound:
                configuration.metrics?.refused(.hlsSegmentSize)
            case .askKeyframe:
                requestKeyframe()
            case .askRefresh:
                requestRefresh()
            }
        }
        guard changed else { return }
        let snapshot = self.snapshot
        waiting.published(snapshot)
        guard closed != nil else { return }
        for output in self.outputs where !failedOutputs.contains(output.destination) {
            do {
                try output.publish(snapshot, targetDuration: configuration.targetDuration, window: configuration.windowSegments)
            } catch {
                failedOutputs.insert(output.destination)
                configuration.logger?.error("HLS stops being written to \(output.destination): \(error); the relay still serves it")
            }
        }
    }

    /// A closed segment joins the window; what slid out of it goes.
    private func publishClosed(_ closed: HLSSnapshot.Segment) {
        let window = configuration.windowSegments
        published.withLock { snapshot in
            if snapshot.open?.sequence == closed.sequence { snapshot.open = nil }
            snapshot.segments.append(closed)
            while snapshot.segments.count > window { snapshot.retired.append(snapshot.removeOldestSegment()) }
            if snapshot.retired.count > window { snapshot.retired.removeFirst(snapshot.retired.count - window) }
            snapshot.parts.removeAll { $0.segment <= closed.sequence - Configuration.segmentsWithParts }
            // Initialization segments and date ranges that no served segment needs any more go too.
            guard let oldest = snapshot.segments.first else { return }
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
    }

    /// Drops the oldest segments, retired ones first, until the session's HLS is within its own budget and the
    /// relay's; the newest segment stays unless the relay's budget has no room even for it.
    private func keepWithinMemory(_ snapshot: inout HLSSnapshot) {
        var total = snapshot.bytes
        var shed = false
        func dropOldest() {
            let before = snapshot.bytes
            if snapshot.retired.isEmpty { _ = snapshot.removeOldestSegment() } else { snapshot.retired.removeFirst() }
            total -= before - snapshot.bytes
            shed = true
            snapshot.droppedForMemory += 1
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
}
