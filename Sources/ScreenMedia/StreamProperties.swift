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

    public init(
        videoType: VideoType = .screen, codec: VideoCodec, width: Int, height: Int,
        estimatedFramesPerSecond: Double, estimatedCaptureDelayMilliseconds: Double
    ) {
        self.videoType = videoType
        self.codec = codec
        self.width = width
        self.height = height
        self.estimatedFramesPerSecond = estimatedFramesPerSecond
        self.estimatedCaptureDelayMilliseconds = estimatedCaptureDelayMilliseconds
    }
}
