/// One compressed audio frame (20 ms of Opus) as it leaves the encoder, lent to the consumer for one call,
/// like ``EncodedFrame``.
public struct EncodedAudioFrame {
    public let codec: AudioCodec
    public let payload: UnsafeRawBufferPointer
    public let channels: Int
    /// Samples per channel the frame holds (960 for 20 ms at 48 kHz).
    public let samples: Int
    /// When its first sample was captured, on the same ``MonotonicClock`` as the video frames.
    public let captureTime: MediaTime
    public let wallClock: WallClockTime
    /// A discontinuous-transmission frame: the input was silent, and the packet is a byte or two.
    public let isSilence: Bool

    public init(
        codec: AudioCodec, payload: UnsafeRawBufferPointer, channels: Int, samples: Int, captureTime: MediaTime,
        wallClock: WallClockTime, isSilence: Bool
    ) {
        self.codec = codec
        self.payload = payload
        self.channels = channels
        self.samples = samples
        self.captureTime = captureTime
        self.wallClock = wallClock
        self.isSilence = isSilence
    }

    /// How long the frame plays.
    public var duration: MediaTime { MediaTime(value: Int64(samples), timescale: 48_000) }
}

@available(*, unavailable, message: "the payload is lent for one call; copy it to keep it")
extension EncodedAudioFrame: Sendable {}

