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
