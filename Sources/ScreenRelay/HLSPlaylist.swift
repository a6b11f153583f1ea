import ScreenMedia

/// The `CLASS` of the date ranges the relay writes for session events.
enum HLSDateRangeClass {
    static let pause = "com.screenpub.pause"
    static let archive = "com.screenpub.archive"
    static let marker = "com.screenpub.marker"
}

/// The text of HLS playlists (RFC 8216) for a packaged stream: pure functions of an ``HLSPackager/Snapshot``.
/// `query` (e.g. `?token=…`) is appended to every URI, so a player that was given a token keeps sending it.
enum HLSPlaylist {
    /// `index.m3u8`: the one variant, with the codec a player must support and the measured peak bit rate.
    static func multivariant(_ snapshot: HLSPackager.Snapshot, query: String) -> String {
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

    /// `stream.m3u8`: the sliding window, each segment with its capture wall-clock time, date ranges ahead of
    /// the segment they start in (or at the top when they started before the window).
    static func media(_ snapshot: HLSPackager.Snapshot, targetDuration: Int, query: String) -> String {
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)",
            "#EXT-X-MEDIA-SEQUENCE:\(snapshot.segments.first?.sequence ?? 0)",
            "#EXT-X-DISCONTINUITY-SEQUENCE:\(snapshot.discontinuitiesBefore)",
        ]
        // Said only while it holds: a segment split while its keyframe was late goes on from the one before.
        if snapshot.segments.allSatisfy(\.independent) { lines.insert("#EXT-X-INDEPENDENT-SEGMENTS", at: 2) }
        var ranges = snapshot.dateRanges.sorted { $0.start < $1.start }[...]
        var initialization: Int?
        for (index, segment) in snapshot.segments.enumerated() {
            if segment.discontinuity && index > 0 { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.initialization != initialization {
                lines.append("#EXT-X-MAP:URI=\"init-\(segment.initialization).mp4\(query)\"")
                initialization = segment.initialization
            }
            let next = index + 1 < snapshot.segments.count ? snapshot.segments[index + 1].programDateTime : nil
            while let range = ranges.first, next.map({ range.start < $0 }) ?? true {
                lines.append(dateRangeTag(range))
                ranges = ranges.dropFirst()
            }
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(segment.programDateTime.iso8601)")
            lines.append("#EXTINF:\(decimal(segment.duration, places: 3)),")
            lines.append("seg-\(segment.sequence).m4s\(query)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func dateRangeTag(_ range: HLSPackager.DateRange) -> String {
        var attributes = ["ID=\"\(range.id)\"", "CLASS=\"\(range.className)\"", "START-DATE=\"\(range.start.iso8601)\""]
        if let end = range.end { attributes.append("END-DATE=\"\(end.iso8601)\"") }
        attributes += range.attributes.keys.sorted().map { "\($0)=\(range.attributes[$0]!)" }
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
