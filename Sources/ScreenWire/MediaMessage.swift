public import ScreenMedia

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
