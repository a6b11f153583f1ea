import ScreenMedia
import ScreenWire

/// One stream's HLS as it can be served: the segments in the playlist and those that left it lately, the parts
/// of the newest segments and of the one being written, the initialization segments and the date ranges.
/// Published by the packager after each part; read by HTTP requests and the outputs.
struct HLSSnapshot: Sendable {
    struct Segment: Sendable {
        let sequence: Int
        let duration: Double
        /// The wall-clock capture time of its first frame.
        let programDateTime: WallClockTime
        let initialization: Int
        /// A new initialization segment starts here (the picture size or codec changed), or frames were left out.
        let discontinuity: Bool
        /// It starts at a keyframe. Only a segment split at the target duration while the publisher's keyframe
        /// was late does not: its frames go on from the previous segment's.
        let independent: Bool
        let bytes: [UInt8]
    }

    /// A partial segment (LL-HLS): a few frames of the segment `segment`, in order, each an `emsg` and a fragment.
    struct Part: Sendable {
        let segment: Int
        let index: Int
        /// The wall-clock capture time its media starts at (its segment's date and its place in it).
        let start: WallClockTime
        let duration: Double
        /// It starts at a keyframe: a player may start here.
        let independent: Bool
        let bytes: [UInt8]

        var end: WallClockTime {
            WallClockTime(millisecondsSince1970: start.millisecondsSince1970 &+ Int64(saturating: (duration * 1000).rounded()))
        }
    }

    /// The segment being written: what its parts are listed under until it closes.
    struct OpenSegment: Sendable, Equatable {
        let sequence: Int
        let programDateTime: WallClockTime
        let initialization: Int
        let discontinuity: Bool
    }

    /// A place in the stream a player may ask for (`_HLS_msn`, `_HLS_part`): part `part` of segment `segment`, or
    /// with no part the whole segment.
    struct Position: Sendable, Equatable {
        var segment: Int
        var part: Int?
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

    static let maximumDateRanges = 64

    var segments: [Segment] = []
    /// Segments that left the playlist lately: still served for a window's length, as RFC 8216 asks (a
    /// player that read an older playlist may still fetch them).
    var retired: [Segment] = []
    /// The parts of the newest listed segments and of the open one, in order.
    var parts: [Part] = []
    var open: OpenSegment?
    var initializations: [Int: [UInt8]] = [:]
    var dateRanges: [DateRange] = []
    /// Discontinuities that slid out of the window (`#EXT-X-DISCONTINUITY-SEQUENCE`).
    var discontinuitiesBefore = 0
    /// Segments dropped to keep within the memory budget, before they slid out of the window.
    var droppedForMemory = 0
    /// What the stream's keyframes declare (its codec string names the profile, the level and the chroma).
    var format = CodedVideoFormat(codec: .vp9)
    var width = 0
    var height = 0
    var framesPerSecond = 0.0

    /// Whether a player has something to start from.
    var isPlayable: Bool { !segments.isEmpty || !parts.isEmpty }

    /// The segment a new part or segment will carry: the open one, or the one after the last closed.
    var liveSegment: Int { open?.sequence ?? (segments.last.map { $0.sequence + 1 } ?? 0) }

    /// The index the live segment's next part will have (what `EXT-X-PRELOAD-HINT` names).
    var nextPart: Int {
        let live = liveSegment
        return parts.last(where: { $0.segment == live }).map { $0.index + 1 } ?? 0
    }

    /// Whether what `position` names is out: that segment closed, or that part of it written.
    func holds(_ position: Position) -> Bool {
        if let last = segments.last, last.sequence >= position.segment { return true }
        guard let part = position.part, let newest = parts.last else { return false }
        return newest.segment > position.segment || (newest.segment == position.segment && newest.index >= part)
    }

    func segment(_ sequence: Int) -> Segment? {
        segments.first(where: { $0.sequence == sequence }) ?? retired.first(where: { $0.sequence == sequence })
    }

    func part(segment: Int, index: Int) -> Part? {
        parts.first(where: { $0.segment == segment && $0.index == index })
    }

    /// The bytes held: listed and retired segments, and the parts (of the open segment, and copies of the
    /// newest closed ones).
    var bytes: Int {
        segments.reduce(0) { $0 + $1.bytes.count } + retired.reduce(0) { $0 + $1.bytes.count } + parts.reduce(0) { $0 + $1.bytes.count }
    }

    /// Takes the oldest listed segment out of the playlist, counting its discontinuity as gone before it.
    mutating func removeOldestSegment() -> Segment {
        let gone = segments.removeFirst()
        if gone.discontinuity { discontinuitiesBefore += 1 }
        parts.removeAll { $0.segment <= gone.sequence }
        return gone
    }

    /// Keeps the latest ``maximumDateRanges`` date ranges.
    mutating func keepLatestDateRanges() {
        if dateRanges.count > Self.maximumDateRanges { dateRanges.removeFirst(dateRanges.count - Self.maximumDateRanges) }
    }
}
