import ScreenMedia

/// The text of HLS playlists (RFC 8216) for a packaged stream: pure functions of an ``HLSPackager/Snapshot``.
/// `query` (e.g. `?token=…`) is appended to every URI, so a player that was given a token keeps sending it.
enum HLSPlaylist {
    /// The H.264 variant's media playlist, and what names its other files (`h264-seg-N.m4s`).
    static let h264Playlist = "h264.m3u8"
    static let h264Prefix = "h264-"

    /// One variant of the multivariant playlist: what a player must decode, how many bits a second it takes, its
    /// size and frame rate, and its media playlist.
    struct Variant: Equatable, Sendable {
        var codecs: String
        var bandwidth: Int
        var width: Int
        var height: Int
        var framesPerSecond: Double
        var uri: String

        /// A packaged variant: its codec string from its initialization segment, its measured peak bit rate.
        init(_ snapshot: HLSSnapshot, uri: String) {
            let peak = snapshot.segments.filter { $0.duration > 0 }.map { Double($0.bytes.count * 8) / $0.duration }.max() ?? 1_000_000
            self.init(
                codecs: snapshot.format.codecString(width: snapshot.width, height: snapshot.height, framesPerSecond: snapshot.framesPerSecond, mp4: true),
                bandwidth: Int(saturating: peak.rounded(.up)), width: snapshot.width, height: snapshot.height,
                framesPerSecond: snapshot.framesPerSecond, uri: uri)
        }

        init(codecs: String, bandwidth: Int, width: Int, height: Int, framesPerSecond: Double, uri: String) {
            (self.codecs, self.bandwidth, self.width, self.height, self.framesPerSecond, self.uri) = (codecs, bandwidth, width, height, framesPerSecond, uri)
        }

        /// What `index.m3u8` lists: the H.264 variant (where there is one) first, both at the higher of their peak
        /// bit rates. Players that check `CODECS` (Safari, hls.js, the viewer page) pick the one they decode;
        /// players that do not — GStreamer 1.22's hlsdemux2 starts on the first variant listed and moves only to
        /// one of a higher `BANDWIDTH`, whatever its codec — stay on the one every player decodes. A `BANDWIDTH`
        /// above a variant's own peak only overstates what it needs.
        static func listed(_ primary: Variant, h264: Variant?) -> [Variant] {
            guard var h264 else { return [primary] }
            var primary = primary
            let peak = max(primary.bandwidth, h264.bandwidth)
            (primary.bandwidth, h264.bandwidth) = (peak, peak)
            return [h264, primary]
        }

        /// The H.264 variant of `primary` before its rendition has been packaged: screenpub's Constrained Baseline at
        /// the same size (even) and frame rate, and the primary's peak bit rate (the rendition aims at half of the
        /// primary's target, in a codec that needs more bits).
        static func h264(beside primary: Variant, uri: String) -> Variant {
            Variant(
                codecs: CodedVideoFormat(codec: .h264).codecString(width: primary.width, height: primary.height, framesPerSecond: primary.framesPerSecond),
                bandwidth: primary.bandwidth, width: primary.width & ~1, height: primary.height & ~1, framesPerSecond: primary.framesPerSecond, uri: uri)
        }
    }

    /// `index.m3u8`: the variants, each with the codec a player must support and its peak bit rate.
    static func multivariant(_ variants: [Variant], query: String) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7"]
        for variant in variants {
            var attributes = ["BANDWIDTH=\(max(1, variant.bandwidth))", "CODECS=\"\(variant.codecs)\"", "RESOLUTION=\(variant.width)x\(variant.height)"]
            if variant.framesPerSecond > 0 { attributes.append("FRAME-RATE=\(decimal(variant.framesPerSecond, places: 3))") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(variant.uri + query)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `index.m3u8` of one variant, `stream.m3u8`.
    static func multivariant(_ snapshot: HLSSnapshot, query: String) -> String {
        multivariant([Variant(snapshot, uri: "stream.m3u8")], query: query)
    }

    /// What an LL-HLS playlist says besides the segments (RFC 8216bis): its parts and how to ask for them.
    struct LowLatency: Sendable {
        var partTarget: Double
        var partHoldBack: Double
        var skipBoundary: Double
        /// A delta playlist (`_HLS_skip=YES`): the segments older than the skip boundary left out.
        var skip = false
    }

    /// `stream.m3u8`: the sliding window, each segment with its capture wall-clock time, date ranges ahead of
    /// the segment they start in (or at the top when they started before the window). With `lowLatency`, the
    /// parts of the newest segments and of the open one, each date range ahead of the part it starts in, the part
    /// to ask for next (`EXT-X-PRELOAD-HINT`) and what the relay answers (blocking reload, delta updates); players
    /// that know none of it read the same segments.
    /// `prefix` names the variant's files (`h264-` for the H.264 variant: `h264-seg-N.m4s`).
    static func media(_ snapshot: HLSSnapshot, targetDuration: Int, query: String, prefix: String = "", lowLatency: LowLatency? = nil) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(lowLatency == nil ? 7 : 9)", "#EXT-X-TARGETDURATION:\(targetDuration)"]
        if let lowLatency {
            lines.append(
                "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=\(decimal(lowLatency.skipBoundary, places: 1)),"
                    + "PART-HOLD-BACK=\(decimal(lowLatency.partHoldBack, places: 3))")
            lines.append("#EXT-X-PART-INF:PART-TARGET=\(decimal(lowLatency.partTarget, places: 3))")
        }
        lines += [
            "#EXT-X-MEDIA-SEQUENCE:\(snapshot.segments.first?.sequence ?? snapshot.liveSegment)",
            "#EXT-X-DISCONTINUITY-SEQUENCE:\(snapshot.discontinuitiesBefore)",
        ]
        // Said only while it holds: a segment split while its keyframe was late goes on from the one before.
        if snapshot.segments.allSatisfy(\.independent) { lines.insert("#EXT-X-INDEPENDENT-SEGMENTS", at: 2) }
        var ranges = snapshot.dateRanges.sorted { $0.start < $1.start }[...]
        var initialization: Int?
        let skipped = lowLatency.map { $0.skip ? skippedSegments(snapshot, boundary: $0.skipBoundary) : 0 } ?? 0
        if skipped > 0 { lines.append("#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)") }
        let listed = snapshot.segments.dropFirst(skipped)
        /// Lists the date ranges not listed yet that start before `limit` (all of them when nil).
        func rangeLines(before limit: WallClockTime?) {
            while let range = ranges.first, limit.map({ range.start < $0 }) ?? true {
                lines.append(dateRangeTag(range))
                ranges = ranges.dropFirst()
            }
        }
        /// The tags ahead of a segment (closed, or the open one) that starts at `start`, with the ranges that start
        /// before `next`.
        func head(discontinuity: Bool, first: Bool, initialization map: Int, start: WallClockTime, next: WallClockTime?) {
            if discontinuity && !first { lines.append("#EXT-X-DISCONTINUITY") }
            if map != initialization {
                lines.append("#EXT-X-MAP:URI=\"\(prefix)init-\(map).mp4\(query)\"")
                initialization = map
            }
            rangeLines(before: next)
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(start.iso8601)")
        }
        /// The segment's parts, each after the date ranges that start before it ends.
        func partLines(of segment: Int) {
            guard lowLatency != nil else { return }
            for part in snapshot.parts where part.segment == segment {
                rangeLines(before: part.end)
                lines.append(
                    "#EXT-X-PART:DURATION=\(decimal(part.duration, places: 3)),URI=\"\(prefix)part-\(part.segment).\(part.index).m4s\(query)\""
                        + (part.independent ? ",INDEPENDENT=YES" : ""))
            }
        }
        for (index, segment) in zip(listed.indices, listed) {
            // A plain playlist lists every later range ahead of its last segment; an LL one ahead of the open one's parts.
            let next = index + 1 < snapshot.segments.count
                ? snapshot.segments[index + 1].programDateTime : lowLatency == nil ? nil : snapshot.open?.programDateTime
            let withParts = lowLatency != nil && snapshot.parts.contains { $0.segment == segment.sequence }
            head(
                discontinuity: segment.discontinuity, first: index == 0, initialization: segment.initialization, start: segment.programDateTime,
                next: withParts ? segment.programDateTime : next)
            if withParts {
                partLines(of: segment.sequence)
                rangeLines(before: next)
            }
            lines.append("#EXTINF:\(decimal(segment.duration, places: 3)),")
            lines.append("\(prefix)seg-\(segment.sequence).m4s\(query)")
        }
        if lowLatency != nil {
            if let open = snapshot.open, snapshot.parts.contains(where: { $0.segment == open.sequence }) {
                head(
                    discontinuity: open.discontinuity, first: snapshot.segments.isEmpty, initialization: open.initialization,
                    start: open.programDateTime, next: open.programDateTime)
                partLines(of: open.sequence)
            }
            // Date ranges that start after everything listed so far (a marker posted just now): ahead of the next part.
            rangeLines(before: nil)
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(prefix)part-\(snapshot.liveSegment).\(snapshot.nextPart).m4s\(query)\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How many of the oldest segments a delta playlist leaves out: those that end more than `boundary` seconds
    /// before the end of the playlist.
    static func skippedSegments(_ snapshot: HLSSnapshot, boundary: Double) -> Int {
        let openSeconds = snapshot.parts.filter { $0.segment == snapshot.open?.sequence }.reduce(0) { $0 + $1.duration }
        var after = openSeconds + snapshot.segments.reduce(0) { $0 + $1.duration }
        var skipped = 0
        for segment in snapshot.segments {
            after -= segment.duration
            guard after >= boundary else { break }
            skipped += 1
        }
        return skipped
    }

    static func dateRangeTag(_ range: HLSSnapshot.DateRange) -> String {
        var attributes = ["ID=\"\(range.id)\"", "CLASS=\"\(range.className)\"", "START-DATE=\"\(range.start.iso8601)\""]
        if let end = range.end { attributes.append("END-DATE=\"\(end.iso8601)\"") }
        attributes += range.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "#EXT-X-DATERANGE:" + attributes.joined(separator: ",")
    }

    /// A quoted-string attribute value: RFC 8216 allows no double quote, carriage return or line feed in one.
    static func quoted(_ text: String) -> String {
        "\"" + String(text.unicodeScalars.filter { $0 != "\"" && $0 != "\r" && $0 != "\n" }.map(Character.init)) + "\""
    }

    /// `value` with exactly `places` decimals (playlists are read by machines: no locale).
    static func decimal(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        // Saturated, not trapped, past 64 bits (a marker's numbers are a client's); the sign written once.
        let scaled = Int64(saturating: (value * scale).rounded())
        let whole = scaled.magnitude / UInt64(scale)
        let fraction = String(scaled.magnitude % UInt64(scale))
        return "\(scaled < 0 ? "-" : "")\(whole).\(String(repeating: "0", count: places - fraction.count))\(fraction)"
    }
}
