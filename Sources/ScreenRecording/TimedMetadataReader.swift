/// Reads back what ``EventMessageBox`` and ``ID3MetadataTag`` write (and what other packagers write the same
/// way): the `emsg` boxes at the top level of a CMAF segment, and the ID3 frames in their messages.
public enum TimedMetadataReader {
    /// One `emsg` box, version 0 or 1 (version 0 gives its time relative to the segment, as
    /// `presentationTimeDelta`).
    public struct Event: Sendable, Equatable {
        public var schemeIdentifier: String
        public var value: String
        public var timescale: UInt32
        /// Version 1: on the track's timeline. Version 0: from the start of the segment.
        public var presentationTime: UInt64
        public var isDelta: Bool
        public var duration: UInt32
        public var identifier: UInt32
        public var message: [UInt8]

        /// Seconds on the track's timeline (or from the segment's start, for version 0).
        public var seconds: Double { timescale == 0 ? 0 : Double(presentationTime) / Double(timescale) }
    }

    /// The `emsg` boxes among the top-level boxes of `segment`, in order; a malformed box ends the walk.
    public static func events(in segment: [UInt8]) -> [Event] {
        var events: [Event] = []
        var offset = 0
        while offset + 8 <= segment.count {
            var size = Int(readUInt32(segment, offset))
            let type = String(decoding: segment[(offset + 4)..<(offset + 8)], as: UTF8.self)
            var header = 8
            if size == 1, offset + 16 <= segment.count {
                size = Int(clamping: readUInt64(segment, offset + 8))
                header = 16
            } else if size == 0 {
                size = segment.count - offset
            }
            guard size >= header, offset + size <= segment.count else { break }
            if type == "emsg", let event = parseEventMessage(Array(segment[(offset + header)..<(offset + size)])) { events.append(event) }
            offset += size
        }
        return events
    }

    private static func parseEventMessage(_ body: [UInt8]) -> Event? {
        guard body.count >= 4 else { return nil }
        var offset = 4
        func string() -> String? {
            guard let end = body[offset...].firstIndex(of: 0) else { return nil }
            defer { offset = end + 1 }
            return String(decoding: body[offset..<end], as: UTF8.self)
        }
        func uint32() -> UInt32? {
            guard offset + 4 <= body.count else { return nil }
            defer { offset += 4 }
            return readUInt32(body, offset)
        }
        switch body[0] {
        case 0:
            guard let scheme = string(), let value = string(), let timescale = uint32(), let delta = uint32(), let duration = uint32(),
                let identifier = uint32()
            else { return nil }
            return Event(
                schemeIdentifier: scheme, value: value, timescale: timescale, presentationTime: UInt64(delta), isDelta: true,
                duration: duration, identifier: identifier, message: Array(body[offset...]))
        case 1:
            guard let timescale = uint32(), let high = uint32(), let low = uint32(), let duration = uint32(), let identifier = uint32(),
                let scheme = string(), let value = string()
            else { return nil }
            return Event(
                schemeIdentifier: scheme, value: value, timescale: timescale, presentationTime: UInt64(high) << 32 | UInt64(low),
                isDelta: false, duration: duration, identifier: identifier, message: Array(body[offset...]))
        default:
            return nil
        }
    }

    /// The frames of an ID3v2.3/2.4 tag: `PRIV` as owner → data, `TXXX` as description → text. Nil if it is not one.
    public static func id3Frames(_ tag: [UInt8]) -> (private: [String: [UInt8]], text: [String: String])? {
        guard tag.count >= 10, tag[0] == 0x49, tag[1] == 0x44, tag[2] == 0x33, tag[3] == 3 || tag[3] == 4 else { return nil }
        let version = tag[3]
        let size = synchsafe(tag, 6)
        guard 10 + size <= tag.count else { return nil }
        var privateFrames: [String: [UInt8]] = [:]
        var textFrames: [String: String] = [:]
        var offset = 10
        while offset + 10 <= 10 + size {
            let identifier = String(decoding: tag[offset..<(offset + 4)], as: UTF8.self)
            guard identifier.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) }) else { break }
            let frameSize = version == 4 ? synchsafe(tag, offset + 4) : Int(readUInt32(tag, offset + 4))
            let start = offset + 10
            guard start + frameSize <= 10 + size else { break }
            let body = Array(tag[start..<(start + frameSize)])
            switch identifier {
            case "PRIV":
                if let end = body.firstIndex(of: 0) {
                    privateFrames[String(decoding: body[..<end], as: UTF8.self)] = Array(body[(end + 1)...])
                }
            case "TXXX":
                // UTF-8 (3) and ISO-8859-1 (0) read as bytes to text; UTF-16 descriptions are not ours.
                if let encoding = body.first, encoding == 0 || encoding == 3, let end = body.dropFirst().firstIndex(of: 0) {
                    let description = String(decoding: body[1..<end], as: UTF8.self)
                    var value = Array(body[(end + 1)...])
                    if value.last == 0 { value.removeLast() }
                    textFrames[description] = String(decoding: value, as: UTF8.self)
                }
            default:
                break
            }
            offset = start + frameSize
        }
        return (privateFrames, textFrames)
    }

    private static func synchsafe(_ bytes: [UInt8], _ offset: Int) -> Int {
        (0..<4).reduce(0) { $0 << 7 | Int(bytes[offset + $1] & 0x7F) }
    }

    private static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }

    private static func readUInt64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }
}
