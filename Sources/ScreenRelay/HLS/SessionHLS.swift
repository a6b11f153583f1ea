import NIOCore
import ScreenMedia
import ScreenWire

/// A session's live HLS: packaged (``HLSPackager``) while someone asks for it, or from the first frame when it is
/// written out (`--hls-dir`); it follows the session's screen stream — the first published, or the next once that
/// one ends — and carries the session's timeline as date ranges: the recording, the presenter's pauses, and the
/// markers posted lately (kept for a timeline that starts after them).
///
/// Its second variant, H.264 for players that decode nothing else (``h264``), is packaged from the stream's
/// rendition while a player reads that variant's playlist; both have the same timeline.
struct SessionHLS {
    /// Markers kept for an HLS timeline that starts later (the window keeps what it covers).
    static var keptMarkers: Int { 32 }

    private(set) var packager: HLSPackager?
    /// The H.264 variant, packaged from the stream's rendition while its playlist is read.
    private(set) var h264: HLSPackager?
    /// The stream it packages (the first variant; the second is its rendition).
    private(set) var streamId: UInt32?
    private var pauses = 0
    private var markers: [HLSSnapshot.DateRange] = []
    /// Written out: packaged from the first frame, whether or not anyone asks.
    private let alwaysOn: HLSPackager.Configuration?

    init(alwaysOn: HLSPackager.Configuration?) { self.alwaysOn = alwaysOn }

    /// The date range of a recording, in any timeline that covers it, and its id (what ends it).
    static func recordingRangeId(_ archiveId: String) -> String { "archive-\(archiveId)" }

    static func recordingRange(archiveId: String, name: String, start: WallClockTime) -> HLSSnapshot.DateRange {
        .init(id: recordingRangeId(archiveId), className: HLSDateRangeClass.archive, start: start, attributes: ["X-NAME": HLSPlaylist.quoted(name)])
    }

    /// What a packager is started with besides its configuration.
    struct Hooks {
        var requestKeyframe: @Sendable () -> Void
        var requestRefresh: @Sendable () -> Void
        var onIdle: @Sendable () -> Void
    }

    /// The packager of a variant (`h264`: the second), started if it is not running (a player's first request for
    /// its playlist) with what the timeline holds so far.
    mutating func start(
        _ configuration: HLSPackager.Configuration, h264 variant: Bool = false, label: String, recording: (archiveId: String, name: String)?,
        hooks: Hooks
    ) -> HLSPackager {
        if let running = variant ? h264 : packager { return running }
        let started = HLSPackager(
            configuration: configuration, label: variant ? label + ".h264" : label, requestKeyframe: hooks.requestKeyframe,
            requestRefresh: hooks.requestRefresh, onIdle: hooks.onIdle)
        if variant { h264 = started } else { packager = started }
        if h264 == nil || packager == nil { streamId = nil }
        if let recording { started.dateRange(Self.recordingRange(archiveId: recording.archiveId, name: recording.name, start: .now())) }
        for marker in markers { started.dateRange(marker) }
        return started
    }

    /// Stops packaging a variant (nobody has asked for its playlist for a while).
    mutating func stop(h264 variant: Bool = false) {
        if variant {
            h264?.stop()
            h264 = nil
        } else {
            packager?.stop()
            packager = nil
        }
        if h264 == nil && packager == nil { streamId = nil }
    }

    private var running: [HLSPackager] { [packager, h264].compactMap { $0 } }

    /// A posted marker: a date range in the timeline, now or when HLS starts.
    mutating func mark(_ range: HLSSnapshot.DateRange) {
        markers.append(range)
        if markers.count > Self.keptMarkers { markers.removeFirst() }
        for packager in running { packager.dateRange(range) }
    }

    /// Whether an admitted frame's stream wants HLS started (written out, not running yet).
    var startsOnFrame: HLSPackager.Configuration? { packager == nil ? alwaysOn : nil }

    /// An admitted video frame of `stream` (a published stream or a rendition); `isPublished` tells whether the
    /// stream packaged so far still is.
    mutating func frame(_ buffer: ByteBuffer, header: MediaFrameHeader, stream: StreamInfo, isPublished: (UInt32) -> Bool) {
        guard packager != nil || h264 != nil else { return }
        if let primary = stream.renditionOf {
            if primary == streamId, stream.properties.codec == .h264 {
                h264?.frame(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond)
            }
            return
        }
        if streamId.map(isPublished) != true, stream.properties.videoType == .screen { streamId = header.streamID }
        guard header.streamID == streamId else { return }
        packager?.frame(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond)
        // A stream published in H.264 is its own H.264 variant.
        if stream.properties.codec == .h264 { h264?.frame(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond) }
    }

    /// The stream HLS packages and asks keyframes and refreshes of: the one it packages while it is published, or
    /// the session's first screen stream (its publisher came back, before its first frame).
    func keyframeStream(among streams: [StreamInfo]) -> UInt32? {
        if let streamId, streams.contains(where: { $0.streamId == streamId }) { return streamId }
        return streams.first(where: { $0.properties.videoType == .screen })?.streamId
    }

    /// The presenter of the packaged stream paused or resumed (`screenpub pause`): a date range in the timeline.
    mutating func streamPaused(_ id: UInt32, paused: Bool) {
        guard !running.isEmpty, id == streamId else { return }
        if paused { pauses += 1 }
        let now = WallClockTime.now()
        for packager in running {
            if paused {
                packager.dateRange(.init(id: "pause-\(pauses)", className: HLSDateRangeClass.pause, start: now))
            } else {
                packager.endDateRange(id: "pause-\(pauses)", at: now)
            }
        }
    }

    /// A recording started or stopped: its date range.
    func recordingStarted(archiveId: String, name: String) {
        let range = Self.recordingRange(archiveId: archiveId, name: name, start: .now())
        for packager in running { packager.dateRange(range) }
    }

    func recordingStopped(archiveId: String) {
        let now = WallClockTime.now()
        for packager in running { packager.endDateRange(id: Self.recordingRangeId(archiveId), at: now) }
    }
}
