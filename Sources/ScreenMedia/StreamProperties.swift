/// What a published stream shows. Screen streams are tuned for sharp text at a low frame rate
/// (the seed's `OTPublisherKitVideoTypeScreen`).
public enum VideoType: String, Sendable, Hashable, Codable {
    case screen
    case camera
}

public enum VideoCodec: String, Sendable, Hashable, Codable, CaseIterable {
    case vp8
    case vp9
    /// AV1, 8-bit, Main profile (4:2:0) or High (4:4:4), as libaom's realtime encoder produces it (payloads are
    /// temporal units in the low-overhead bitstream format; keyframes carry the sequence header, see
    /// ``AV1SequenceHeader``).
    case av1
}

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

/// The properties announced when a stream is published.
public struct StreamProperties: Sendable, Hashable, Codable {
    public var videoType: VideoType
    public var codec: VideoCodec
    public var width: Int
    public var height: Int
    /// The frame rate the source aims for (the seed's `estimatedFramesPerSecond`).
    public var estimatedFramesPerSecond: Double
    /// Time from the screen changing to the frame being handed on, in milliseconds
    /// (the seed's `estimatedCaptureDelay`).
    public var estimatedCaptureDelayMilliseconds: Double
    /// Whether video is being sent (the seed's `hasVideo`): false while the publisher has paused the share;
    /// subscribers keep showing the last picture.
    public var hasVideo: Bool
    /// The stream's sound; nil when it has none.
    public var audio: AudioProperties?
    /// Whether audio frames are being sent: false while the publisher has muted its sound (or paused the
    /// share). Meaningful only with ``audio``.
    public var hasAudio: Bool
    /// The WebCodecs/RFC 6381 codec string of the stream's pictures (`av01.0.08M.08`, `vp09.00.10.08`, `vp8`; the long form for 4:4:4), so
    /// that a viewer configures its decoder without reading the bitstream; nil from publishers before it existed.
    public var codecString: String?

    public init(
        videoType: VideoType = .screen, codec: VideoCodec, width: Int, height: Int,
        estimatedFramesPerSecond: Double, estimatedCaptureDelayMilliseconds: Double, hasVideo: Bool = true,
        audio: AudioProperties? = nil, hasAudio: Bool = true, codecString: String? = nil
    ) {
        self.codecString = codecString
        self.hasVideo = hasVideo
        self.audio = audio
        self.hasAudio = hasAudio
        self.videoType = videoType
        self.codec = codec
        self.width = width
        self.height = height
        self.estimatedFramesPerSecond = estimatedFramesPerSecond
        self.estimatedCaptureDelayMilliseconds = estimatedCaptureDelayMilliseconds
    }
}

extension StreamProperties {
    private enum CodingKeys: String, CodingKey {
        case videoType, codec, width, height, estimatedFramesPerSecond, estimatedCaptureDelayMilliseconds, hasVideo, audio, hasAudio,
            codecString
    }

    /// `hasVideo` and `hasAudio` may be absent (peers from before pausing and audio existed): they then mean
    /// true; `audio` absent means a stream without sound.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            videoType: try container.decode(VideoType.self, forKey: .videoType),
            codec: try container.decode(VideoCodec.self, forKey: .codec),
            width: try container.decode(Int.self, forKey: .width),
            height: try container.decode(Int.self, forKey: .height),
            estimatedFramesPerSecond: try container.decode(Double.self, forKey: .estimatedFramesPerSecond),
            estimatedCaptureDelayMilliseconds: try container.decode(Double.self, forKey: .estimatedCaptureDelayMilliseconds),
            hasVideo: try container.decodeIfPresent(Bool.self, forKey: .hasVideo) ?? true,
            audio: try container.decodeIfPresent(AudioProperties.self, forKey: .audio),
            hasAudio: try container.decodeIfPresent(Bool.self, forKey: .hasAudio) ?? true,
            codecString: try container.decodeIfPresent(String.self, forKey: .codecString))
    }
}

extension StreamProperties {
    /// The WebCodecs codec string of a stream that starts with `keyframe` (its payload) at this size and rate, as
    /// the keyframe declares it (``CodedVideoFormat``); 8-bit 4:2:0 when it declares nothing.
    public static func codecString(
        _ codec: VideoCodec, keyframe: [UInt8], width: Int, height: Int, framesPerSecond: Double
    ) -> String {
        (CodedVideoFormat(codec: codec, keyframe: keyframe) ?? CodedVideoFormat(codec: codec))
            .codecString(width: width, height: height, framesPerSecond: framesPerSecond)
    }
}

extension VideoCodec {
    /// The lowest VP9 level (10: 1.0 … 62: 6.2; VP8 in MP4 reuses the table) whose maximum luma picture size and
    /// sample rate a stream of this size and frame rate fits.
    public static func vpxLevel(width: Int, height: Int, framesPerSecond: Double) -> Int {
        let picture = width * height
        let rate = Double(picture) * max(framesPerSecond, 1)
        // (level, maximum luma picture size, maximum luma sample rate) from the VP9 levels table.
        let levels: [(Int, Int, Double)] = [
            (10, 36_864, 829_440), (11, 73_728, 2_764_800), (20, 122_880, 4_608_000), (21, 245_760, 9_216_000),
            (30, 552_960, 20_736_000), (31, 983_040, 36_864_000), (40, 2_228_224, 83_558_400), (41, 2_228_224, 160_432_128),
            (50, 8_912_896, 311_951_360), (51, 8_912_896, 588_251_136), (52, 8_912_896, 1_176_502_272),
            (60, 35_651_584, 1_176_502_272), (61, 35_651_584, 2_353_004_544), (62, 35_651_584, 4_706_009_088),
        ]
        return levels.first { picture <= $0.1 && rate <= $0.2 }?.0 ?? 62
    }
}
