/// What a published stream shows. Screen streams are tuned for sharp text at a low frame rate
/// (the seed's `OTPublisherKitVideoTypeScreen`).
public enum VideoType: String, Sendable, Hashable, Codable {
    case screen
    case camera
}

public enum VideoCodec: String, Sendable, Hashable, Codable, CaseIterable {
    case vp8
    case vp9

    /// The WebCodecs / RFC 6381 codec string.
    public var webCodecsName: String {
        switch self {
        case .vp8: "vp8"
        case .vp9: "vp09.00.10.08"
        }
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

    public init(
        videoType: VideoType = .screen, codec: VideoCodec, width: Int, height: Int,
        estimatedFramesPerSecond: Double, estimatedCaptureDelayMilliseconds: Double, hasVideo: Bool = true
    ) {
        self.hasVideo = hasVideo
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
        case videoType, codec, width, height, estimatedFramesPerSecond, estimatedCaptureDelayMilliseconds, hasVideo
    }

    /// `hasVideo` may be absent (peers from before pausing existed): it then means true.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            videoType: try container.decode(VideoType.self, forKey: .videoType),
            codec: try container.decode(VideoCodec.self, forKey: .codec),
            width: try container.decode(Int.self, forKey: .width),
            height: try container.decode(Int.self, forKey: .height),
            estimatedFramesPerSecond: try container.decode(Double.self, forKey: .estimatedFramesPerSecond),
            estimatedCaptureDelayMilliseconds: try container.decode(Double.self, forKey: .estimatedCaptureDelayMilliseconds),
            hasVideo: try container.decodeIfPresent(Bool.self, forKey: .hasVideo) ?? true)
    }
}
