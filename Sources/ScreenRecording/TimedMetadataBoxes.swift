public import ScreenMedia

/// An ID3v2.4 tag carrying one frame's metadata, as HLS players read timed metadata (hls.js, Shaka,
/// AVFoundation): a `PRIV` frame with the metadata's bytes exactly (owner ``ownerIdentifier``), a `TXXX`
/// frame with the same as text when it is UTF-8, and a `TXXX` frame with the frame's wall-clock capture time.
public struct ID3MetadataTag: Equatable, Sendable {
    public static let ownerIdentifier = "screenpub.metadata"
    public static let metadataDescription = "screenpub.metadata"
    public static let captureTimeDescription = "screenpub.capture-time"

    public var metadata: FrameMetadata
    public var wallClock: WallClockTime

    public init(metadata: FrameMetadata, wallClock: WallClockTime) {
        self.metadata = metadata
        self.wallClock = wallClock
    }

    /// The tag's bytes: the 10-byte header, then the frames (no padding, no extended header).
    public var bytes: [UInt8] {
        var frames: [UInt8] = []
        let raw = metadata.bytes
        Self.appendFrame("PRIV", Array(Self.ownerIdentifier.utf8) + [0] + raw, to: &frames)
        if let text = String(validating: raw, as: UTF8.self), !text.contains("\0") {
            Self.appendFrame("TXXX", Self.textValue(description: Self.metadataDescription, text), to: &frames)
        }
        Self.appendFrame("TXXX", Self.textValue(description: Self.captureTimeDescription, wallClock.iso8601), to: &frames)
        return Array("ID3".utf8) + [4, 0, 0] + Self.synchsafe(frames.count) + frames
    }

    /// UTF-8 (encoding 3), the description and its terminator, then the value.
    private static func textValue(description: String, _ value: String) -> [UInt8] {
        [3] + Array(description.utf8) + [0] + Array(value.utf8)
    }

    private static func appendFrame(_ identifier: String, _ body: [UInt8], to frames: inout [UInt8]) {
        frames += Array(identifier.utf8) + synchsafe(body.count) + [0, 0] + body
    }

    /// ID3v2.4 sizes: 28 bits in four bytes of seven.
    private static func synchsafe(_ value: Int) -> [UInt8] {
        [UInt8((value >> 21) & 0x7F), UInt8((value >> 14) & 0x7F), UInt8((value >> 7) & 0x7F), UInt8(value & 0x7F)]
    }
}

/// A version-1 `emsg` box (ISO/IEC 23009-1 §5.10.3.3, as CMAF carries it ahead of a fragment): its message
/// shown at `presentationTime` (in `timescale` units, on the track's timeline) for `duration`.
/// With ``id3Scheme`` the message is an ID3 tag (AOM "Carriage of ID3 Timed Metadata in CMAF").
public struct EventMessageBox: Equatable, Sendable {
    public static let id3Scheme = "https://aomedia.org/emsg/ID3"

    public var schemeIdentifier: String
    public var value: String
    public var timescale: UInt32
    public var presentationTime: UInt64
    public var duration: UInt32
    public var identifier: UInt32
    public var message: [UInt8]

    public init(
        schemeIdentifier: String = EventMessageBox.id3Scheme, value: String = "", timescale: UInt32, presentationTime: UInt64,
        duration: UInt32, identifier: UInt32, message: [UInt8]
    ) {
        self.schemeIdentifier = schemeIdentifier
        self.value = value
        self.timescale = timescale
        self.presentationTime = presentationTime
        self.duration = duration
        self.identifier = identifier
        self.message = message
    }

    /// The whole box: size, `emsg`, version 1 and no flags, then the fields in version 1's order.
    public var bytes: [UInt8] {
        var body: [UInt8] = [1, 0, 0, 0]
        Self.append(timescale, to: &body)
        Self.append(UInt32(truncatingIfNeeded: presentationTime >> 32), to: &body)
        Self.append(UInt32(truncatingIfNeeded: presentationTime), to: &body)
        Self.append(duration, to: &body)
        Self.append(identifier, to: &body)
        body += Array(schemeIdentifier.utf8) + [0] + Array(value.utf8) + [0] + message
        var box: [UInt8] = []
        Self.append(UInt32(8 + body.count), to: &box)
        return box + Array("emsg".utf8) + body
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
