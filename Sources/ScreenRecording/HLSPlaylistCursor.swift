/// Where a player following a live HLS stream is (the next part or segment it needs), and what to fetch from a
/// playlist to go on: the parts from there on, or a whole segment whose parts are no longer listed (one that fell
/// behind, or a server without parts). The Swift twin of the viewer page's `nextFetches` (hls-playlist.js).
public struct HLSPlaylistCursor: Sendable, Equatable {
    public var sequence: Int
    public var part: Int

    public init(sequence: Int, part: Int) {
        self.sequence = sequence
        self.part = part
    }

    /// One thing to fetch: a part or a whole segment of `segment`.
    public struct Fetch: Sendable, Equatable {
        public var uri: String
        public var segment: HLSPlaylistParser.Segment
        /// It starts its segment (its first part, or the whole segment).
        public var startsSegment: Bool
    }

    /// Where a player joining `playlist` starts: the newest part a keyframe starts (the live picture at once), or
    /// without parts the segment `segmentsFromEdge` from the end, as players do.
    public static func start(_ playlist: HLSPlaylistParser.MediaPlaylist, segmentsFromEdge: Int = 3) -> HLSPlaylistCursor {
        for segment in playlist.segments.reversed() {
            if let index = segment.parts.lastIndex(where: \.independent) { return HLSPlaylistCursor(sequence: segment.sequence, part: index) }
        }
        let closed = playlist.segments.filter { $0.uri != nil }
        let first = closed.isEmpty ? nil : closed[max(0, closed.count - segmentsFromEdge)]
        return HLSPlaylistCursor(sequence: first?.sequence ?? playlist.mediaSequence, part: 0)
    }

    /// What to fetch from `playlist`, in order, and where the player is after them.
    public func fetches(in playlist: HLSPlaylistParser.MediaPlaylist) -> (fetches: [Fetch], next: HLSPlaylistCursor) {
        var fetches: [Fetch] = []
        var (sequence, part) = (self.sequence, self.part)
        for segment in playlist.segments where segment.sequence >= sequence {
            if segment.sequence > sequence { part = 0 }
            sequence = segment.sequence
            if !segment.parts.isEmpty {
                for index in segment.parts.indices where index >= part {
                    fetches.append(Fetch(uri: segment.parts[index].uri, segment: segment, startsSegment: index == 0))
                }
                part = max(part, segment.parts.count)
            } else if let uri = segment.uri {
                fetches.append(Fetch(uri: uri, segment: segment, startsSegment: part == 0))
            }
            guard segment.uri != nil else { break }  // still being written: its next part comes next
            (sequence, part) = (sequence &+ 1, 0)
        }
        return (fetches, HLSPlaylistCursor(sequence: sequence, part: part))
    }

    /// The query a blocking reload adds (RFC 8216bis `_HLS_msn`, `_HLS_part`).
    public var blockingQuery: String { "_HLS_msn=\(sequence)&_HLS_part=\(part)" }
}
