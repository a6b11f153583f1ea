/// What a published stream shows. Screen streams are tuned for sharp text at a low frame rate
/// (the seed's `OTPublisherKitVideoTypeScreen`).
public enum VideoType: String, Sendable, Hashable, Codable {
    case screen
    case camera
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

