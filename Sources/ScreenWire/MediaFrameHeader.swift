public import ScreenMedia

/// The fixed header of a binary WebSocket message carrying one encoded video frame.
///
/// Layout (big-endian, 48 bytes), then `metadataLength` bytes of metadata, then `payloadLength` bytes of
/// VP8/VP9 data. Written as media frame version 1, which every receiver reads; version 2 has the same layout
/// with a kind at offset 7 (0 video; audio frames are ``AudioFrameHeader``). Specified in docs/protocol.md.
///
/// | offset | size | field |
/// |---:|---:|---|
/// | 0 | 2 | magic `SP` (0x53 0x50) |
/// | 2 | 1 | version (1) |
/// | 3 | 1 | header length (48) |
/// | 4 | 1 | flags: bit 0 keyframe, bit 1 keepalive, bits 2–3 temporal layer id (protocol 3), bit 4 catch-up (protocol 5); other bits 0 |
/// | 5 | 1 | codec: 1 VP8, 2 VP9, 3 AV1, 4 H.264 |
/// | 6 | 1 | metadata length (0–32) |
/// | 7 | 1 | reserved, 0 (version 2: the kind, 0) |
/// | 8 | 4 | stream id |
/// | 12 | 2 | width |
/// | 14 | 2 | height |
/// | 16 | 8 | sequence number |
/// | 24 | 8 | capture time value; the time is within 2^60 ns of zero (``MediaTime/maximumWireNanoseconds``) |
/// | 32 | 4 | capture time timescale (> 0) |
/// | 36 | 8 | wall-clock capture time, ms since 1970 (before the year 10000) |
/// | 44 | 4 | payload length |
public struct MediaFrameHeader: Sendable, Equatable {
    public static let magic: (UInt8, UInt8) = (0x53, 0x50)
    public static let version: UInt8 = 1
    public static let size = 48
    /// The largest payload accepted: far above any VP9 frame at 4K, far below what would hurt the relay.
    public static let maximumPayload = 8 << 20

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let keyframe = Flags(rawValue: 1 << 0)
        /// An unchanged picture re-sent to show the stream is alive.
        public static let keepalive = Flags(rawValue: 1 << 1)
        /// Bits 2–3: the frame's temporal layer (0–3). Frames of a layer reference only frames of lower or the same
        /// layer, so dropping every frame above a layer leaves a stream that decodes at a lower frame rate.
        /// Sent only to peers of protocol 3 that asked for them; others get them cleared (``withoutLayer``).
        public static let layerBits = Flags(rawValue: 0b1100)
        /// Bit 4: catch-up — a frame the relay sends from its cached pictures so that the subscriber's decoder
        /// reaches the newest picture: decoded, not shown (it is older than what comes after it), and not a measure
        /// of latency. Sent only to subscribers that asked (`subscribe` with `catchUp`, protocol 5).
        public static let catchUp = Flags(rawValue: 1 << 4)
        static let known: Flags = [.keyframe, .keepalive, .layerBits, .catchUp]
        /// The highest layer id the bits can carry.
        public static let highestLayer = 3

        /// The flags with temporal layer `layer` (0–3).
        public static func layer(_ layer: Int) -> Flags {
            precondition((0...3).contains(layer), "a temporal layer id is 0–3")
            return Flags(rawValue: UInt8(layer) << 2)
        }

        public var layer: Int { Int((rawValue & Self.layerBits.rawValue) >> 2) }
        /// The flags a peer from before protocol 3 can parse.
        public var withoutLayer: Flags { subtracting(.layerBits) }
        public var isCatchUp: Bool { contains(.catchUp) }
    }

    public var streamID: UInt32
    public var sequence: UInt64
    public var flags: Flags
    public var codec: VideoCodec
    public var width: Int
    public var height: Int
    public var captureTime: MediaTime
    public var wallClockMilliseconds: Int64
    public var metadata: FrameMetadata
    public var payloadLength: Int

    public init(
        streamID: UInt32, sequence: UInt64, flags: Flags, codec: VideoCodec, width: Int, height: Int,
        captureTime: MediaTime, wallClockMilliseconds: Int64, metadata: FrameMetadata, payloadLength: Int
    ) {
        self.streamID = streamID
        self.sequence = sequence
        self.flags = flags
        self.codec = codec
        self.width = width
        self.height = height
        self.captureTime = captureTime
        self.wallClockMilliseconds = wallClockMilliseconds
        self.metadata = metadata
        self.payloadLength = payloadLength
    }

    public var isKeyframe: Bool { flags.contains(.keyframe) }
    /// The frame's temporal layer: 0 unless the publisher codes layers.
    public var temporalLayer: Int { flags.layer }
    /// Where the flags byte is in an encoded header (a relay clears the layer bits there for older subscribers).
    public static let flagsOffset = 4

    /// Bytes of header and metadata before the payload.
    public var encodedSize: Int { Self.size + metadata.count }

    /// Writes header and metadata into `buffer` (at least ``encodedSize`` bytes); returns the bytes written.
    public func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= encodedSize, "buffer too small for a media frame header")
        precondition(width >= 0 && width <= 0xFFFF && height >= 0 && height <= 0xFFFF, "size out of range")
        var writer = ByteWriter(buffer)
        writer.put(Self.magic.0)
        writer.put(Self.magic.1)
        writer.put(Self.version)
        writer.put(UInt8(Self.size))
        writer.put(flags.rawValue)
        writer.put(codec.wireValue)
        writer.put(UInt8(metadata.count))
        writer.put(UInt8(0))
        writer.put(streamID)
        writer.put(UInt16(width))
        writer.put(UInt16(height))
        writer.put(sequence)
        writer.put(UInt64(bitPattern: captureTime.value))
        writer.put(UInt32(bitPattern: captureTime.timescale))
        writer.put(UInt64(bitPattern: wallClockMilliseconds))
        writer.put(UInt32(payloadLength))
        metadata.withUnsafeBytes { writer.put($0) }
        return writer.offset
    }

    /// The header and metadata as bytes (allocates; for tests and tools).
    public func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedSize) { buffer, count in
            count = encode(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Parses a whole binary message that must be a video frame. Returns the header and where the payload is
    /// inside `message`. Never traps and never allocates: anything malformed, oversized, of another version or
    /// of another kind is a ``WireError`` (receivers that also take audio use ``MediaMessage/parse(_:)``).
    public static func parse(_ message: UnsafeRawBufferPointer) throws(WireError) -> (header: MediaFrameHeader, payload: Range<Int>) {
        switch try MediaMessage.parse(message) {
        case .video(let header, let payload): return (header, payload)
        case .audio: throw WireError(.malformed, "an audio frame came where a video frame was expected")
        case .unknownKind(let kind): throw WireError(.malformed, "a media frame of kind \(kind) came where a video frame was expected")
        }
    }

    /// Parses a message held in an array.
    public static func parse(_ message: [UInt8]) throws(WireError) -> (header: MediaFrameHeader, payload: Range<Int>) {
        let result = message.withUnsafeBytes { bytes in
            Result { () throws(WireError) in try parse(bytes) }
        }
        return try result.get()
    }
}

extension VideoCodec {
    var wireValue: UInt8 {
        switch self {
        case .vp8: 1
        case .vp9: 2
        case .av1: 3
        case .h264: 4
        }
    }

    init?(wireValue: UInt8) {
        switch wireValue {
        case 1: self = .vp8
        case 2: self = .vp9
        case 3: self = .av1
        case 4: self = .h264
        default: return nil
        }
    }
}

/// Big-endian writes into a buffer the caller sized.
struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    mutating func put(_ value: UInt8) {
        buffer[offset] = value
        offset += 1
    }

    mutating func put<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: Value.self)
        offset += MemoryLayout<Value>.size
    }

    mutating func put(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // The caller sized the buffer for the whole header (``MediaFrameHeader/encode(into:)``), so it is not empty.
        (buffer.baseAddress! + offset).copyMemory(from: base, byteCount: bytes.count)
        offset += bytes.count
    }
}

/// Big-endian reads from a buffer whose length the caller checked.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, at offset: Int) {
        self.buffer = buffer
        self.offset = offset
    }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func uint16() -> UInt16 { read() }
    mutating func uint32() -> UInt32 { read() }
    mutating func uint64() -> UInt64 { read() }

    private mutating func read<Value: FixedWidthInteger>() -> Value {
        defer { offset += MemoryLayout<Value>.size }
        return Value(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Value.self))
    }
}
