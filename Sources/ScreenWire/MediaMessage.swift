public import ScreenMedia

/// The fixed header of a binary WebSocket message carrying one encoded audio frame (media frame version 2,
/// kind 1). The same 48 bytes as a video frame's header (``MediaFrameHeader``), with the kind at offset 7 and
/// the channel and sample counts where a video frame has its size. Specified in docs/protocol.md.
///
/// | offset | size | field |
/// |---:|---:|---|
/// | 0 | 2 | magic `SP` |
/// | 2 | 1 | version (2) |
/// | 3 | 1 | header length (48) |
/// | 4 | 1 | flags: bit 2 silence (a DTX frame); other bits 0 |
/// | 5 | 1 | codec: 1 Opus |
/// | 6 | 1 | metadata length (0) |
/// | 7 | 1 | kind (1, audio) |
/// | 8 | 4 | stream id |
/// | 12 | 2 | channels |
/// | 14 | 2 | samples per channel |
/// | 16 | 8 | sequence (audio frames of the stream) |
/// | 24 | 8 | capture time value (first sample); within 2^60 ns of zero |
/// | 32 | 4 | capture time timescale (> 0) |
/// | 36 | 8 | wall-clock capture time, ms since 1970 |
/// | 44 | 4 | payload length |
public struct AudioFrameHeader: Sendable, Equatable {
    public static let version: UInt8 = 2
    /// The largest Opus packet (120 ms at 510 kbit/s is under 8 KB); more is not an audio frame of ours.
    public static let maximumPayload = 64 << 10
    static let silenceFlag: UInt8 = 1 << 2

    public var streamID: UInt32
    public var sequence: UInt64
    public var codec: AudioCodec
    public var channels: Int
    public var samples: Int
    public var captureTime: MediaTime
    public var wallClockMilliseconds: Int64
    public var isSilence: Bool
    public var payloadLength: Int

    public init(
        streamID: UInt32, sequence: UInt64, codec: AudioCodec, channels: Int, samples: Int, captureTime: MediaTime,
        wallClockMilliseconds: Int64, isSilence: Bool, payloadLength: Int
    ) {
        self.streamID = streamID
        self.sequence = sequence
        self.codec = codec
        self.channels = channels
        self.samples = samples
        self.captureTime = captureTime
        self.wallClockMilliseconds = wallClockMilliseconds
        self.isSilence = isSilence
        self.payloadLength = payloadLength
    }

    public var encodedSize: Int { MediaFrameHeader.size }

    /// Writes the header into `buffer` (at least ``encodedSize`` bytes); returns the bytes written.
    public func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= encodedSize, "buffer too small for an audio frame header")
        precondition(channels > 0 && channels <= 0xFFFF && samples >= 0 && samples <= 0xFFFF, "counts out of range")
        var writer = ByteWriter(buffer)
        writer.put(MediaFrameHeader.magic.0)
        writer.put(MediaFrameHeader.magic.1)
        writer.put(Self.version)
        writer.put(UInt8(MediaFrameHeader.size))
        writer.put(isSilence ? Self.silenceFlag : 0)
        writer.put(codec.wireValue)
        writer.put(UInt8(0))
        writer.put(MediaKind.audio.rawValue)
        writer.put(streamID)
        writer.put(UInt16(channels))
        writer.put(UInt16(samples))
        writer.put(sequence)
        writer.put(UInt64(bitPattern: captureTime.value))
        writer.put(UInt32(bitPattern: captureTime.timescale))
        writer.put(UInt64(bitPattern: wallClockMilliseconds))
        writer.put(UInt32(payloadLength))
        return writer.offset
    }

    /// The header as bytes (allocates; for tests and tools).
    public func encoded() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedSize) { buffer, count in
            count = encode(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }
}

/// What a media frame carries (offset 7 of its header; version-1 frames are all video).
public enum MediaKind: UInt8, Sendable {
    case video = 0
    case audio = 1
}

/// One binary message of the protocol: a video frame, an audio frame, or a frame of a kind a later version
/// added (which a receiver ignores).
public enum MediaMessage: Sendable, Equatable {
    case video(MediaFrameHeader, payload: Range<Int>)
    case audio(AudioFrameHeader, payload: Range<Int>)
    case unknownKind(UInt8)

    /// The latest wall-clock capture time accepted: the start of the year 10000, in ms since 1970 (what an
    /// ISO-8601 date with four digits can say).
    public static let maximumWallClockMilliseconds: Int64 = 253_402_300_800_000

    /// Parses a whole binary message. Never traps and never allocates: anything malformed, oversized or of
    /// another version is a ``WireError``.
    public static func parse(_ message: UnsafeRawBufferPointer) throws(WireError) -> MediaMessage {
        guard message.count >= 4 else { throw WireError(.malformed, "media frame of \(message.count) bytes is shorter than its header") }
        guard message[0] == MediaFrameHeader.magic.0, message[1] == MediaFrameHeader.magic.1 else {
            throw WireError(.malformed, "media frame does not start with SP")
        }
        let version = message[2]
        guard version == 1 || version == 2 else {
            throw WireError(.unsupportedVersion, "media frame version \(version) is not supported (this peer speaks 1 and 2)")
        }
        guard Int(message[3]) == MediaFrameHeader.size else {
            throw WireError(.malformed, "media frame header length \(message[3]) is not \(MediaFrameHeader.size)")
        }
        guard message.count >= MediaFrameHeader.size else {
            throw WireError(.malformed, "media frame of \(message.count) bytes is shorter than its header")
        }
        var reader = ByteReader(message, at: 4)
        let flags = reader.byte()
        let codecValue = reader.byte()
        let metadataLength = Int(reader.byte())
        let kindValue = reader.byte()
        // Version 1 has a reserved 0 where version 2 has the kind.
        guard version == 2 || kindValue == 0 else { throw WireError(.malformed, "media frame reserved byte is not 0") }
        guard let kind = MediaKind(rawValue: kindValue) else { return .unknownKind(kindValue) }
        let streamID = reader.uint32()
        let first16 = Int(reader.uint16())
        let second16 = Int(reader.uint16())
        let sequence = reader.uint64()
        let captureValue = Int64(bitPattern: reader.uint64())
        let timescale = Int32(bitPattern: reader.uint32())
        guard timescale > 0 else { throw WireError(.malformed, "media frame timescale \(timescale) is not positive") }
        let captureTime = MediaTime(value: captureValue, timescale: timescale)
        guard captureTime.isWithinWireBounds else {
            throw WireError(.malformed, "media frame capture time \(captureTime) is more than 2^60 ns from zero")
        }
        let wallClock = Int64(bitPattern: reader.uint64())
        guard (0...MediaMessage.maximumWallClockMilliseconds).contains(wallClock) else {
            throw WireError(.malformed, "media frame wall-clock time \(wallClock) ms is not between 1970 and the year 10000")
        }
        let payloadLength = Int(reader.uint32())
        switch kind {
        case .video:
            let flags = MediaFrameHeader.Flags(rawValue: flags)
            guard MediaFrameHeader.Flags.known.isSuperset(of: flags) else {
                throw WireError(.malformed, "media frame has unknown flags \(flags.rawValue)")
            }
            guard let codec = VideoCodec(wireValue: codecValue) else { throw WireError(.malformed, "media frame has an unknown codec") }
            guard metadataLength <= FrameMetadata.maximumSize else {
                throw WireError(.metadataTooLarge, "media frame metadata is \(metadataLength) bytes; the limit is \(FrameMetadata.maximumSize)")
            }
            guard payloadLength <= MediaFrameHeader.maximumPayload else {
                throw WireError(.tooLarge, "media frame payload of \(payloadLength) bytes exceeds \(MediaFrameHeader.maximumPayload)")
            }
            let size = MediaFrameHeader.size
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
                streamID: streamID, sequence: sequence, flags: flags, codec: codec, width: first16, height: second16,
                captureTime: captureTime, wallClockMilliseconds: wallClock, metadata: metadata, payloadLength: payloadLength)
            return .video(header, payload: (size + metadataLength)..<message.count)
        case .audio:
            guard flags & ~AudioFrameHeader.silenceFlag == 0 else { throw WireError(.malformed, "audio frame has unknown flags \(flags)") }
            guard let codec = AudioCodec(wireValue: codecValue) else { throw WireError(.malformed, "audio frame has an unknown codec") }
            guard metadataLength == 0 else { throw WireError(.malformed, "audio frames carry no metadata") }
            guard first16 == 1 || first16 == 2 else { throw WireError(.malformed, "audio frame has \(first16) channels; 1 or 2 are allowed") }
            guard payloadLength <= AudioFrameHeader.maximumPayload else {
                throw WireError(.tooLarge, "audio frame payload of \(payloadLength) bytes exceeds \(AudioFrameHeader.maximumPayload)")
            }
            guard message.count == MediaFrameHeader.size + payloadLength else {
                throw WireError(.malformed, "audio frame is \(message.count) bytes but its header announces \(MediaFrameHeader.size + payloadLength)")
            }
            let header = AudioFrameHeader(
                streamID: streamID, sequence: sequence, codec: codec, channels: first16, samples: second16, captureTime: captureTime,
                wallClockMilliseconds: wallClock, isSilence: flags & AudioFrameHeader.silenceFlag != 0, payloadLength: payloadLength)
            return .audio(header, payload: MediaFrameHeader.size..<message.count)
        }
    }

    /// Parses a message held in an array.
    public static func parse(_ message: [UInt8]) throws(WireError) -> MediaMessage {
        let result = message.withUnsafeBytes { bytes in
            Result { () throws(WireError) in try parse(bytes) }
        }
        return try result.get()
    }
}

extension AudioCodec {
    var wireValue: UInt8 {
        switch self {
        case .opus: 1
        }
    }

    init?(wireValue: UInt8) {
        switch wireValue {
        case 1: self = .opus
        default: return nil
        }
    }
}
