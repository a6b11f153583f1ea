public enum AudioCodec: String, Sendable, Hashable, Codable, CaseIterable {
    case opus

    /// The WebCodecs codec string.
    public var webCodecsName: String { rawValue }
}

/// A stream's sound, announced with its properties: absent for a stream without audio.
public struct AudioProperties: Sendable, Hashable, Codable {
    public var codec: AudioCodec
    /// Samples per second (Opus: always 48 000).
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// Time from a sound reaching the capture stream to its encoded frame in hand, in milliseconds, smoothed
    /// (the audio counterpart of ``StreamProperties/estimatedCaptureDelayMilliseconds``).
    public var estimatedCaptureDelayMilliseconds: Double

    public init(codec: AudioCodec = .opus, sampleRate: Int = 48_000, channels: Int, estimatedCaptureDelayMilliseconds: Double = 0) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.estimatedCaptureDelayMilliseconds = estimatedCaptureDelayMilliseconds
    }
}
