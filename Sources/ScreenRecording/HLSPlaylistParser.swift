/// What a player needs from HLS playlists (RFC 8216, with RFC 8216bis's LL-HLS parts), read from their text: a
/// multivariant playlist's variants, a media playlist's segments with their dates, the date ranges ahead of them
/// and their parts.
public enum HLSPlaylistParser {
    public struct Part: Sendable, Equatable {
        public var uri: String
        public var duration: Double
        /// A keyframe starts it: a player may start here.
        public var independent: Bool
    }

    public struct Segment: Sendable, Equatable {
        public var sequence: Int
        /// Nil while it is being written (only its parts are listed so far).
        public var uri: String?
        public var duration: Double?
        /// `EXT-X-PROGRAM-DATE-TIME` as written (ISO-8601), when given.
        public var programDateTime: String?
        /// The `EXT-X-DATERANGE` tags listed ahead of it, as attribute name → value (quotes removed).
        public var dateRanges: [[String: String]]
        /// The `EXT-X-MAP` URI in force for it.
        public var initialization: String?
        /// Its `EXT-X-PART`s, listed for the newest segments by an LL-HLS server.
        public var parts: [Part] = []
    }

    public struct MediaPlaylist: Sendable, Equatable {
        public var targetDuration: Double
        public var mediaSequence: Int
        public var ended: Bool
        public var segments: [Segment]
        /// `PART-TARGET` when the server writes parts.
        public var partTarget: Double?
        /// The server holds a request until the part it names is out (`CAN-BLOCK-RELOAD=YES`).
        public var canBlockReload = false
        /// Segments a delta playlist left out (`EXT-X-SKIP`).
        public var skipped = 0
    }

    /// Whether the text is a multivariant playlist, and the URIs of its variants, in order.
    public static func variants(_ text: String) -> [String] { variantList(text).map(\.uri) }

    /// A variant of a multivariant playlist: its media playlist and its `CODECS` ("" when it says none).
    public struct Variant: Equatable, Sendable {
        public var uri: String
        public var codecs: String
    }

    /// The variants of a multivariant playlist, in order.
    public static func variantList(_ text: String) -> [Variant] {
        var variants: [Variant] = []
        var codecs: String?
        for line in lines(text) {
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                codecs = attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))["CODECS"] ?? ""
            } else if let pending = codecs, !line.hasPrefix("#") {
                variants.append(Variant(uri: line, codecs: pending))
                codecs = nil
            }
        }
        return variants
    }

    /// The variant a player that decodes every codec follows: the stream as published (AV1 or VP9) rather than
    /// the H.264 variant, which screenrelay lists first for players that read no `CODECS`.
    public static func preferredVariant(_ text: String) -> Variant? {
        let variants = variantList(text)
        return variants.first { !$0.codecs.hasPrefix("avc1") } ?? variants.first
    }

    public static func media(_ text: String) -> MediaPlaylist? {
        let all = lines(text)
        guard all.first == "#EXTM3U" else { return nil }
        var playlist = MediaPlaylist(targetDuration: 0, mediaSequence: 0, ended: false, segments: [])
        var duration: Double?
        var date: String?
        var ranges: [[String: String]] = []
        var parts: [Part] = []
        var initialization: String?
        func nextSequence() -> Int { playlist.mediaSequence &+ playlist.skipped &+ playlist.segments.count }
        for line in all {
            if let value = line.value(of: "#EXT-X-TARGETDURATION:") {
                playlist.targetDuration = Double(value) ?? 0
            } else if let value = line.value(of: "#EXT-X-MEDIA-SEQUENCE:") {
                playlist.mediaSequence = Int(value) ?? 0
            } else if let value = line.value(of: "#EXT-X-SKIP:") {
                playlist.skipped = max(0, attributes(value)["SKIPPED-SEGMENTS"].flatMap { Int($0) } ?? 0)
            } else if let value = line.value(of: "#EXT-X-SERVER-CONTROL:") {
                playlist.canBlockReload = attributes(value)["CAN-BLOCK-RELOAD"] == "YES"
            } else if let value = line.value(of: "#EXT-X-PART-INF:") {
                playlist.partTarget = attributes(value)["PART-TARGET"].flatMap(Double.init)
            } else if let value = line.value(of: "#EXT-X-PART:") {
                let part = attributes(value)
                if let uri = part["URI"] {
                    parts.append(Part(uri: uri, duration: part["DURATION"].flatMap(Double.init) ?? 0, independent: part["INDEPENDENT"] == "YES"))
                }
            } else if line == "#EXT-X-ENDLIST" {
                playlist.ended = true
            } else if let value = line.value(of: "#EXTINF:") {
                duration = Double(value.prefix { $0 != "," })
            } else if let value = line.value(of: "#EXT-X-PROGRAM-DATE-TIME:") {
                date = value
            } else if let value = line.value(of: "#EXT-X-DATERANGE:") {
                ranges.append(attributes(value))
            } else if let value = line.value(of: "#EXT-X-MAP:") {
                initialization = attributes(value)["URI"]
            } else if !line.hasPrefix("#"), let segmentDuration = duration {
                playlist.segments.append(Segment(
                    sequence: nextSequence(), uri: line, duration: segmentDuration, programDateTime: date, dateRanges: ranges,
                    initialization: initialization, parts: parts))
                (duration, date, ranges, parts) = (nil, nil, [], [])
            }
        }
        if !parts.isEmpty || !ranges.isEmpty {
            // The segment being written: its parts so far, and the date ranges listed after them.
            playlist.segments.append(Segment(
                sequence: nextSequence(), uri: nil, duration: nil, programDateTime: date, dateRanges: ranges, initialization: initialization,
                parts: parts))
        }
        return playlist
    }

    /// An attribute list (`NAME=value,NAME="quoted, text",…`), quotes removed.
    public static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(list)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = String(rest[..<equals]).trimmingSpaces
            rest = rest[rest.index(after: equals)...]
            var value: Substring
            if rest.first == "\"" {
                let afterQuote = rest.index(after: rest.startIndex)
                let close = rest[afterQuote...].firstIndex(of: "\"") ?? rest.endIndex
                value = rest[afterQuote..<close]
                rest = close < rest.endIndex ? rest[rest.index(after: close)...] : ""
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            result[name] = String(value)
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return result
    }

    private static func lines(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }
}

extension String {
    fileprivate func value(of prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }

    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
