import NIOCore
import ScreenMedia
import ScreenWire

/// A session's live HLS: packaged (``HLSPackager``) while someone asks for it, or from the first frame when it is
/// written out (`--hls-dir`); it follows the session's screen stream — the first published, or the next once that
/// one ends — and carries the session's timeline as date ranges: the recording, the presenter's pauses, and the
/// markers posted lately (kept for a timeline that starts after them).
struct SessionHLS {
    /// Markers kept for an HLS timeline that starts later (the window keeps what it covers).
    static var keptMarkers: Int { 32 }

    private(set) var packager: HLSPackager?
    /// The stream it packages.
    private var streamId: UInt32?
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

    /// The packager, started if it is not running (a player's first request) with what the timeline holds so far.
    mutating func start(
        _ configuration: HLSPackager.Configuration, label: String, recording: (archiveId: String, name: String)?,
        requestKeyframe: @escaping @Sendable () -> Void, requestRefresh: @escaping @Sendable () -> Void,
        onIdle: @escaping @Sendable () -> Void
    ) -> HLSPackager {
        if let packager { return packager }
        let started = HLSPackager(
            configuration: configuration, label: label, requestKeyframe: requestKeyframe, requestRefresh: requestRefresh, onIdle: onIdle)
        packager = started
        streamId = nil
        if let recording { started.dateRange(Self.recordingRange(archiveId: recording.archiveId, name: recording.name, start: .now())) }
        for marker in markers { started.dateRange(marker) }
        return started
    }

    /// Stops packaging (nobody has asked for the playlist for a while).
    mutating func stop() {
        packager?.stop()
        packager = nil
        streamId = nil
    }

    /// A posted marker: a date range in the timeline, now or when HLS starts.
    mutating func mark(_ range: HLSSnapshot.DateRange) {
        markers.append(range)
        if markers.count > Self.keptMarkers { markers.removeFirst() }
        packager?.dateRange(range)
    }

    /// Whether an admitted frame's stream wants HLS started (written out, not running yet).
    var startsOnFrame: HLSPackager.Configuration? { packager == nil ? alwaysOn : nil }

    /// An admitted video frame of `stream`; `isPublished` tells whether the stream packaged so far still is.
    mutating func frame(_ buffer: ByteBuffer, header: MediaFrameHeader, stream: StreamInfo, isPublished: (UInt32) -> Bool) {
        guard let packager else { return }
        if streamId.map(isPublished) != true, stream.properties.videoType == .screen { streamId = header.streamID }
        if header.streamID == streamId { packager.frame(buffer, header: header, framesPerSecond: stream.properties.estimatedFramesPerSecond) }
    }

    /// The stream HLS asks keyframes and refreshes of: the one it packages, or the session's first screen stream.
    func keyframeStream(among streams: [StreamInfo]) -> UInt32? {
        streamId ?? streams.first(where: { $0.properties.videoType == .screen })?.streamId
    }

    /// The presenter of the packaged stream paused or resumed (`screenpub pause`): a date range in the timeline.
    mutating func streamPaused(_ id: UInt32, paused: Bool) {
        guard let packager, id == streamId else { return }
        if paused {
            pauses += 1
            packager.dateRange(.init(id: "pause-\(pauses)", className: HLSDateRangeClass.pause, start: .now()))
        } else {
            packager.endDateRange(id: "pause-\(pauses)", at: .now())
        }
    }

    /// A recording started or stopped: its date range.
    func recordingStarted(archiveId: String, name: String) {
        packager?.dateRange(Self.recordingRange(archiveId: archiveId, name: name, start: .now()))
    }

    func recordingStopped(archiveId: String) {
        packager?.endDateRange(id: Self.recordingRangeId(archiveId), at: .now())
    }
}
