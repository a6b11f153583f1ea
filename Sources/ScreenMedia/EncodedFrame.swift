/// One compressed frame as it leaves the encoder, lent to the consumer for the duration of a call.
///
/// `payload` points into the encoder's own buffer and is valid only inside that call: a consumer that
/// keeps the bytes copies them (``payloadBytes``). Lending instead of copying keeps the encode path free
/// of per-frame allocations.
public struct EncodedFrame {
    public let codec: VideoCodec
    public let payload: UnsafeRawBufferPointer
    public let isKeyframe: Bool
    public let width: Int
    public let height: Int
    public let captureTime: MediaTime
    public let wallClock: WallClockTime
    public let metadata: FrameMetadata
    /// Its temporal layer (0 unless the encoder codes layers): frames of a layer reference only lower or equal ones.
    public let temporalLayer: Int
    /// A relay's catch-up: a cached picture sent so that the decoder reaches the newest one; decoded, not shown.
    public var isCatchUp = false

    public init(
        codec: VideoCodec, payload: UnsafeRawBufferPointer, isKeyframe: Bool, width: Int, height: Int,
        captureTime: MediaTime, wallClock: WallClockTime, metadata: FrameMetadata, temporalLayer: Int = 0
    ) {
        self.temporalLayer = temporalLayer
        self.codec = codec
        self.payload = payload
        self.isKeyframe = isKeyframe
        self.width = width
        self.height = height
        self.captureTime = captureTime
        self.wallClock = wallClock
        self.metadata = metadata
    }

    /// A copy of the payload that outlives the call.
    public var payloadBytes: [UInt8] { Array(payload) }
}

@available(*, unavailable, message: "the payload is lent for one call; copy payloadBytes to keep it")
extension EncodedFrame: Sendable {}
