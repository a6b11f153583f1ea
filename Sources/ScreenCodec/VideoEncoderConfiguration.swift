public import ScreenMedia

/// Encoder settings, the same for every codec. The defaults suit a screen at a low frame rate.
public struct VideoEncoderConfiguration: Sendable, Hashable {
    public var codec: VideoCodec
    /// Target bit rate in kbit/s (constant bit rate).
    public var bitrateKbps: Int
    public var framesPerSecond: Double
    /// Encoder threads; 1 keeps a share on one core.
    public var threads: Int
    /// Encode only the 16×16 blocks inside the frame's changed rectangles (the libraries' active map).
    public var usesActiveMap: Bool
    /// The library's speed (`cpu-used`), higher is faster and coarser: VP9 5–9, VP8 4–16, AV1 7–10, H.264 0–2
    /// (openh264's high, medium and low complexity)
    /// (``speedRange(for:)``). Nil: the codec's default.
    public var speed: Int?
    /// Temporal layers (1–3; VP8 codes one): with three, frames go in layers 0, 2, 1, 2, …, so that a relay can
    /// send a slow viewer only the lower layers, at a half or a quarter of the frame rate, and it still decodes.
    public var temporalLayers: Int
    /// How colour is sampled: 4:4:4 (AV1 High profile, VP9 profile 1) keeps 1-pixel coloured strokes sharp;
    /// VP8 codes 4:2:0 only (its encoder refuses 4:4:4, saying so).
    public var chroma: ChromaFormat
    /// With ``chroma`` 4:4:4: keep it only if the first picture has coloured detail (``ColourDetail``), else
    /// code 4:2:0, whose bytes and CPU 4:4:4 would spend for nothing (`--chroma auto`). Decided once, on the
    /// first frame (a keyframe anyway), for the encoder's life: a stream keeps one format.
    public var chromaFollowsContent: Bool
    /// The target will follow the network (``RealtimeEncoder/setTargetBitrate(kbps:)``, a live share): the rate
    /// control is set up for it from the first frame. Switched over later, libaom's layered rate control kept
    /// top-layer frames of new pages of text up to twice as large as set up from the start (measured at 1080p).
    public var followsNetwork: Bool

    public init(
        codec: VideoCodec = .vp9, bitrateKbps: Int = 1500, framesPerSecond: Double = 5, threads: Int = 1,
        usesActiveMap: Bool = true, speed: Int? = nil, temporalLayers: Int = 1, chroma: ChromaFormat = .yuv420,
        chromaFollowsContent: Bool = false, followsNetwork: Bool = false
    ) {
        self.followsNetwork = followsNetwork
        self.speed = speed
        self.chroma = chroma
        self.chromaFollowsContent = chromaFollowsContent
        self.temporalLayers = codec == .vp8 ? 1 : max(1, min(3, temporalLayers))
        self.codec = codec
        self.bitrateKbps = bitrateKbps
        self.framesPerSecond = framesPerSecond
        self.threads = threads
        self.usesActiveMap = usesActiveMap
    }

    /// Why `codec` cannot be encoded with `chroma`, in a sentence; nil when it can. The command line and the
    /// encoder both refuse with it.
    public static func chromaRefusal(codec: VideoCodec, chroma: ChromaFormat) -> String? {
        guard chroma == .yuv444 else { return nil }
        switch codec {
        case .vp8: return "VP8 has no 4:4:4: it codes colour at half resolution only; give --codec vp9 or av1 with --chroma 444, or --chroma 420"
        case .h264: return "screenpub's H.264 is 4:2:0 only (the profile every browser and player decodes); give --codec vp9 or av1 with --chroma 444, or --chroma 420"
        case .vp9, .av1: return nil
        }
    }

    /// The realtime speeds a codec's library accepts.
    public static func speedRange(for codec: VideoCodec) -> ClosedRange<Int> {
        switch codec {
        case .vp9: 5...9
        case .vp8: 4...16
        case .av1: 7...10
        case .h264: 0...2
        }
    }
}

/// The encoder for `configuration.codec`: a ``RealtimeEncoder`` over libvpx for VP8 and VP9, libaom for AV1,
/// openh264 for H.264.
public func makeVideoEncoder(_ configuration: VideoEncoderConfiguration) -> any VideoEncoder {
    RealtimeEncoder(configuration: configuration)
}

/// A decoder for `codec`: libvpx for VP8 and VP9, libaom for AV1, openh264 for H.264.
public func makeVideoDecoder(for codec: VideoCodec) throws(CodecError) -> any VideoDecoder {
    try FrameDecoder(codec: codec)
}

