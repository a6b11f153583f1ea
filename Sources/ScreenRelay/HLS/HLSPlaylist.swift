import ScreenMedia

/// The text of HLS playlists (RFC 8216) for a packaged stream: pure functions of an ``HLSPackager/Snapshot``.
/// `query` (e.g. `?token=…`) is appended to every URI, so a player that was given a token keeps sending it.
enum HLSPlaylist {
    /// `index.m3u8`: the one variant, with the codec a player must support and the measured peak bit rate.
    static func multivariant(_ snapshot: HLSSnapshot, query: String) -> String {
        let peak = snapshot.segments.filter { $0.duration > 0 }.map { Double($0.bytes.count * 8) / $0.duration }.max() ?? 1_000_000
        var attributes = [
            "BANDWIDTH=\(Int(peak.rounded(.up)))",
            "CODECS=\"\(snapshot.format.codecString(width: snapshot.width, height: snapshot.height, framesPerSecond: snapshot.framesPerSecond, mp4: true))\"",
            "RESOLUTION=\(snapshot.width)x\(snapshot.height)",
        ]
        if snapshot.framesPerSecond > 0 { attributes.append("FRAME-RATE=\(decimal(snapshot.framesPerSecond, places: 3))") }
        return """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-STREAM-INF:\(attributes.joined(separator: ","))
            stream.m3u8\(query)

            """
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
    static func media(_ snapshot: HLSSnapshot, targetDuration: Int, query: String, lowLatency: LowLatency? = nil) -> String {
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
                lines.append("#EXT-X-MAP:URI=\"init-\(map).mp4\(query)\"")
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
                    "#EXT-X-PART:DURATION=\(decimal(part.duration, places: 3)),URI=\"part-\(part.segment).\(part.index).m4s\(query)\""
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
            lines.append("seg-\(segment.sequence).m4s\(query)")
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
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-\(snapshot.liveSegment).\(snapshot.nextPart).m4s\(query)\"")
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
