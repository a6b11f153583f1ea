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

/// Where encoded audio goes, beside the video frames of the same share: a sink that carries sound (a relay
/// connection, a WebM file) also conforms to this. In a share, audio comes from the audio thread while the
/// capture thread writes video into the same object: such sinks are also `Sendable` and keep the two safe
/// together: they are ``ConcurrentAudioSink``s.
public protocol EncodedAudioSink: AnyObject {
    /// Takes one encoded audio frame; the payload is lent for this call only.
    func writeAudio(_ frame: EncodedAudioFrame) throws
}

/// An audio sink that takes its sound from another thread than its video (the share's audio thread beside
/// the capture thread), safely.
public protocol ConcurrentAudioSink: EncodedAudioSink, Sendable {}

/// Receives captured sound on the audio thread: 48 kHz interleaved float samples, lent for the call.
public protocol AudioSampleConsumer: AnyObject {
    /// `captureTime`: when the first sample was captured, on ``MonotonicClock``.
    func consume(_ samples: UnsafeBufferPointer<Float>, channels: Int, captureTime: MediaTime) throws
}

/// Compresses sound in fixed frames. One encoder belongs to one thread.
public protocol AudioEncoder: AnyObject {
    var codec: AudioCodec { get }
    var channels: Int { get }
    /// Samples per channel in one frame (960: 20 ms at 48 kHz).
    var frameSamples: Int { get }
    /// Samples the encoder holds back before its output starts (a decoder's pre-skip).
    var lookaheadSamples: Int { get }
    /// Encodes one frame (``frameSamples`` × channels interleaved samples in −1…1) and hands `body` the packet
    /// and whether it is a silence (DTX) frame.
    func encode(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeRawBufferPointer, _ isSilence: Bool) throws -> Void) throws
}
