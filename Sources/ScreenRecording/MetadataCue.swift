public import ScreenMedia

/// One frame's metadata and capture times as recorded in the WebM's timed metadata track.
///
/// The track is WebVTT with the `metadata` disposition (`D_WEBVTT/METADATA`), one cue per video frame at the
/// frame's timestamp, whose text is one JSON object:
/// `{"captureTime":"<value>/<timescale>","wallClock":"<ISO-8601>","metadataBase64":"…","metadata":"…"}`
/// (`metadata` only when the bytes are UTF-8). See docs/recording.md.
public struct MetadataCue: Sendable, Equatable {
    public var metadata: FrameMetadata
    public var captureTime: MediaTime
    public var wallClock: WallClockTime

    public init(metadata: FrameMetadata, captureTime: MediaTime, wallClock: WallClockTime) {
        self.metadata = metadata
        self.captureTime = captureTime
        self.wallClock = wallClock
    }
}

/// Writes cue JSON into a reused byte buffer, so recording a frame allocates nothing.
struct MetadataCueFormatter {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(256) }

    mutating func format(_ cue: MetadataCue) {
        bytes.removeAll(keepingCapacity: true)
        append("{\"captureTime\":\"")
        appendInteger(cue.captureTime.value)
        append("/")
        appendInteger(Int64(cue.captureTime.timescale))
        append("\",\"wallClock\":\"")
        FrameMetadata.iso8601(cue.wallClock).withUnsafeBytes { bytes.append(contentsOf: $0) }
        append("\",\"metadataBase64\":\"")
        cue.metadata.withUnsafeBytes { appendBase64($0) }
        append("\"")
        if cue.metadata.isUTF8 {
            append(",\"metadata\":\"")
            cue.metadata.withUnsafeBytes { appendJSONEscaped($0) }
            append("\"")
        }
        append("}")
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func appendInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    private static let base64Alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    private mutating func appendBase64(_ input: UnsafeRawBufferPointer) {
        Self.base64Alphabet.withUTF8Buffer { alphabet in
            var index = 0
            while index < input.count {
                let b0 = UInt32(input[index])
                let b1 = index + 1 < input.count ? UInt32(input[index + 1]) : 0
                let b2 = index + 2 < input.count ? UInt32(input[index + 2]) : 0
                let triple = b0 << 16 | b1 << 8 | b2
                bytes.append(alphabet[Int(triple >> 18 & 63)])
                bytes.append(alphabet[Int(triple >> 12 & 63)])
                bytes.append(index + 1 < input.count ? alphabet[Int(triple >> 6 & 63)] : UInt8(ascii: "="))
                bytes.append(index + 2 < input.count ? alphabet[Int(triple & 63)] : UInt8(ascii: "="))
                index += 3
            }
        }
    }

    private mutating func appendJSONEscaped(_ input: UnsafeRawBufferPointer) {
        let hex: StaticString = "0123456789abcdef"
        for byte in input {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                append("\\u00")
                hex.withUTF8Buffer { digits in
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0xF)])
                }
            default:
                bytes.append(byte)
            }
        }
    }
}
