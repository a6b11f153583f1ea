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

