public import ScreenMedia

/// What the WHIP publisher sends on its data channel ("screenpub-metadata") for each video frame, just before the
/// frame's RTP packets: the frame's RTP timestamp, its capture time and its metadata, so that a viewer pairs the
/// frame it shows (`requestVideoFrameCallback`'s `rtpTimestamp`) with them. Specified in docs/protocol.md
/// ("Frame metadata over WebRTC"); `packaging/whip-viewer/frame-metadata.js` is the browser's reader. Pure.
///
/// Version 1, big-endian, 15 + n bytes:
/// `0` version (1) · `1` flags (bit 0: keyframe; others 0) · `2–5` RTP timestamp · `6–13` capture wall clock,
/// microseconds since 1970 (signed) · `14` metadata length n (0–32) · `15…` metadata. A version-1 reader ignores
/// bytes after the metadata (room for additions that do not need a new version).
public struct WHIPFrameMessage: Sendable, Equatable {
    public static let version: UInt8 = 1
    public static let headerSize = 15
    /// Where the RTP timestamp sits: webrtcbin's payloader writes the packet's own there as it sends.
    public static let timestampOffset = 2
    /// The longest message: header and the largest metadata.
    public static let maximumSize = headerSize + FrameMetadata.maximumSize

    public var rtpTimestamp: UInt32
    /// Capture wall clock, microseconds since 1970.
    public var captureMicroseconds: Int64
    public var isKeyframe: Bool
    public var metadata: [UInt8]

    public init(rtpTimestamp: UInt32 = 0, captureMicroseconds: Int64, isKeyframe: Bool, metadata: [UInt8]) {
        self.rtpTimestamp = rtpTimestamp
        self.captureMicroseconds = captureMicroseconds
        self.isKeyframe = isKeyframe
        self.metadata = Array(metadata.prefix(FrameMetadata.maximumSize))
    }

    /// The message for a frame captured at `wallClock` with `metadata`; its RTP timestamp is filled in as it is sent.
    public init(wallClock: WallClockTime, isKeyframe: Bool, metadata: FrameMetadata) {
        let (seconds, overflow) = wallClock.secondsSince1970.multipliedReportingOverflow(by: 1_000_000)
        let micros = overflow ? (wallClock.secondsSince1970 < 0 ? Int64.min : Int64.max) : seconds.addingReportingOverflow(Int64(wallClock.nanoseconds / 1000)).partialValue
        self.init(captureMicroseconds: micros, isKeyframe: isKeyframe, metadata: metadata.bytes)
    }

    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [Self.version, isKeyframe ? 1 : 0]
        bytes.reserveCapacity(Self.headerSize + metadata.count)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: rtpTimestamp >> UInt32(shift))) }
        let capture = UInt64(bitPattern: captureMicroseconds)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: capture >> UInt64(shift))) }
        bytes.append(UInt8(metadata.count))
        bytes.append(contentsOf: metadata)
        return bytes
    }

    /// Why bytes are not a message this version reads.
    public enum ParseError: Error, Sendable, Equatable {
        case tooShort(Int)
        case unknownVersion(UInt8)
        case metadataTooLong(Int)
        case truncatedMetadata(declared: Int, present: Int)
    }

    /// Reads a message from a peer (hostile: every length is checked; nothing traps).
    public init(parsing bytes: [UInt8]) throws(ParseError) {
        guard bytes.count >= Self.headerSize else { throw .tooShort(bytes.count) }
        guard bytes[0] == Self.version else { throw .unknownVersion(bytes[0]) }
        let length = Int(bytes[14])
        guard length <= FrameMetadata.maximumSize else { throw .metadataTooLong(length) }
        guard bytes.count - Self.headerSize >= length else { throw .truncatedMetadata(declared: length, present: bytes.count - Self.headerSize) }
        var timestamp: UInt32 = 0
        for index in 2..<6 { timestamp = timestamp << 8 | UInt32(bytes[index]) }
        var capture: UInt64 = 0
        for index in 6..<14 { capture = capture << 8 | UInt64(bytes[index]) }
        self.init(
            rtpTimestamp: timestamp, captureMicroseconds: Int64(bitPattern: capture), isKeyframe: bytes[1] & 1 != 0,
            metadata: Array(bytes[Self.headerSize..<Self.headerSize + length]))
    }
}
