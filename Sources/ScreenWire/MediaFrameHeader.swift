public import ScreenMedia

/// The fixed header of a binary WebSocket message carrying one encoded frame (protocol version 1).
///
/// Layout (big-endian, 48 bytes), then `metadataLength` bytes of metadata, then `payloadLength` bytes of
/// VP8/VP9 data. Specified in docs/protocol.md.
///
/// | offset | size | field |
/// |---:|---:|---|
/// | 0 | 2 | magic `SP` (0x53 0x50) |
/// | 2 | 1 | version (1) |
/// | 3 | 1 | header length (48) |
/// | 4 | 1 | flags: bit 0 keyframe, bit 1 keepalive; other bits 0 |
/// | 5 | 1 | codec: 1 VP8, 2 VP9 |
/// | 6 | 1 | metadata length (0–32) |
/// | 7 | 1 | reserved, 0 |
/// | 8 | 4 | stream id |
/// | 12 | 2 | width |
/// | 14 | 2 | height |
/// | 16 | 8 | sequence number |
/// | 24 | 8 | capture time value |
/// | 32 | 4 | capture time timescale (> 0) |
/// | 36 | 8 | wall-clock capture time, ms since 1970 |
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
        static let known: Flags = [.keyframe, .keepalive]
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

    /// Parses a whole binary message. Returns the header and where the payload is inside `message`.
    /// Never traps and never allocates: anything malformed, oversized or of another version is a ``WireError``.
    public static func parse(_ message: UnsafeRawBufferPointer) throws(WireError) -> (header: MediaFrameHeader, payload: Range<Int>) {
        guard message.count >= 4 else { throw WireError(.malformed, "media frame of \(message.count) bytes is shorter than its header") }
        guard message[0] == magic.0, message[1] == magic.1 else { throw WireError(.malformed, "media frame does not start with SP") }
        guard message[2] == version else {
            throw WireError(.unsupportedVersion, "media frame version \(message[2]) is not supported (this peer speaks \(version))")
        }
        guard Int(message[3]) == size else { throw WireError(.malformed, "media frame header length \(message[3]) is not \(size)") }
        guard message.count >= size else { throw WireError(.malformed, "media frame of \(message.count) bytes is shorter than its header") }
        var reader = ByteReader(message, at: 4)
        let flags = Flags(rawValue: reader.byte())
        guard Flags.known.isSuperset(of: flags) else { throw WireError(.malformed, "media frame has unknown flags \(flags.rawValue)") }
        guard let codec = VideoCodec(wireValue: reader.byte()) else { throw WireError(.malformed, "media frame has an unknown codec") }
        let metadataLength = Int(reader.byte())
        guard metadataLength <= FrameMetadata.maximumSize else {
            throw WireError(.metadataTooLarge, "media frame metadata is \(metadataLength) bytes; the limit is \(FrameMetadata.maximumSize)")
        }
        guard reader.byte() == 0 else { throw WireError(.malformed, "media frame reserved byte is not 0") }
        let streamID = reader.uint32()
        let width = Int(reader.uint16())
        let height = Int(reader.uint16())
        let sequence = reader.uint64()
        let captureValue = Int64(bitPattern: reader.uint64())
        let timescale = Int32(bitPattern: reader.uint32())
        guard timescale > 0 else { throw WireError(.malformed, "media frame timescale \(timescale) is not positive") }
        let wallClock = Int64(bitPattern: reader.uint64())
        let payloadLength = Int(reader.uint32())
        guard payloadLength <= maximumPayload else {
            throw WireError(.tooLarge, "media frame payload of \(payloadLength) bytes exceeds \(maximumPayload)")
        }
        guard message.count == size + metadataLength + payloadLength else {
            throw WireError(
                .malformed,
                "media frame is \(message.count) bytes but its header announces \(size + metadataLength + payloadLength)")
        }
        let metadata: FrameMetadata
        do {
            metadata = try FrameMetadata(bytes: UnsafeRawBufferPointer(rebasing: message[size..<(size + metadataLength)]))
        } catch {
            throw WireError(.metadataTooLarge, error.description)
        }
        let header = MediaFrameHeader(
            streamID: streamID, sequence: sequence, flags: flags, codec: codec, width: width, height: height,
            captureTime: MediaTime(value: captureValue, timescale: timescale), wallClockMilliseconds: wallClock,
            metadata: metadata, payloadLength: payloadLength)
        return (header, (size + metadataLength)..<message.count)
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
        }
    }

    init?(wireValue: UInt8) {
        switch wireValue {
        case 1: self = .vp8
        case 2: self = .vp9
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
