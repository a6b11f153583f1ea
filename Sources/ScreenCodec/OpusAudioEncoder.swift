import COpus
import COpusShims
public import ScreenMedia

/// Opus with libopus for the share's sound: 48 kHz, 20 ms frames, in-band FEC and DTX on, so that a silent
/// desktop costs almost nothing (DTX frames of a byte or two) and a lost packet is partly recovered from the next.
///
/// ``encode(_:_:)`` takes one 20 ms frame of interleaved float samples and hands the packet to a closure from
/// a buffer the encoder keeps: nothing is allocated per frame.
public final class OpusAudioEncoder: AudioEncoder {
    public struct Configuration: Sendable, Equatable {
        public var channels: Int
        public var bitsPerSecond: Int
        /// Discontinuous transmission: near-empty frames while the input is silent.
        public var dtx: Bool
        /// In-band forward error correction, sized for this expected loss (percent).
        public var expectedLossPercent: Int

        public init(channels: Int = 2, bitsPerSecond: Int = 64_000, dtx: Bool = true, expectedLossPercent: Int = 5) {
            self.channels = channels
            self.bitsPerSecond = bitsPerSecond
            self.dtx = dtx
            self.expectedLossPercent = expectedLossPercent
        }
    }

    public static let sampleRate = 48_000
    /// Samples per channel in one 20 ms frame.
    public static let frameSamples = 960
    /// The largest packet libopus writes for one frame (its recommended bound).
    static let maximumPacket = 4000

    public let configuration: Configuration
    private let encoder: OpaquePointer
    private var packet: [UInt8]

    public init(configuration: Configuration = .init()) throws(CodecError) {
        guard configuration.channels == 1 || configuration.channels == 2 else {
            throw CodecError(.unsupportedConfiguration, "Opus here takes mono or stereo, not \(configuration.channels) channels")
        }
        guard (6_000...510_000).contains(configuration.bitsPerSecond) else {
            throw CodecError(.unsupportedConfiguration, "an Opus bit rate is 6 to 510 kbit/s, not \(configuration.bitsPerSecond / 1000)")
        }
        var status: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(Self.sampleRate), Int32(configuration.channels), OPUS_APPLICATION_AUDIO, &status),
            status == OPUS_OK
        else {
            throw CodecError(.unsupportedConfiguration, "libopus cannot make an encoder: \(Self.describe(status))")
        }
        self.encoder = encoder
        self.configuration = configuration
        packet = [UInt8](repeating: 0, count: Self.maximumPacket)
        let settings = [
            COpusShims_setBitrate(encoder, Int32(configuration.bitsPerSecond)),
            COpusShims_setInbandFEC(encoder, 1),
            COpusShims_setPacketLossPercent(encoder, Int32(configuration.expectedLossPercent)),
            COpusShims_setDTX(encoder, configuration.dtx ? 1 : 0),
        ]
        if let failed = settings.first(where: { $0 != OPUS_OK }) {
            opus_encoder_destroy(encoder)
            throw CodecError(.unsupportedConfiguration, "libopus refused a setting: \(Self.describe(failed))")
        }
    }

    deinit { opus_encoder_destroy(encoder) }

    public var codec: AudioCodec { .opus }
    public var channels: Int { configuration.channels }
    public var frameSamples: Int { Self.frameSamples }

    /// Samples the encoder holds back before its output starts (to line audio up with its capture time).
    public var lookaheadSamples: Int {
        var samples: Int32 = 0
        _ = COpusShims_getLookahead(encoder, &samples)
        return Int(samples)
    }

    /// Encodes one 20 ms frame (``frameSamples`` × channels interleaved samples in −1…1) and hands `body` the
    /// packet and whether it is a DTX frame (silence: a byte or two, or none to send).
    public func encode(_ samples: UnsafeBufferPointer<Float>, _ body: (UnsafeRawBufferPointer, _ isSilence: Bool) throws -> Void) throws {
        guard samples.count == Self.frameSamples * configuration.channels, let base = samples.baseAddress else {
            throw CodecError(.unsupportedConfiguration, "an Opus frame is \(Self.frameSamples) samples per channel, got \(samples.count / configuration.channels)")
        }
        // `packet` and `pcm` are allocated at their full size once, so their buffers have a base address.
        let written = packet.withUnsafeMutableBufferPointer { output in
            opus_encode_float(encoder, base, Int32(Self.frameSamples), output.baseAddress!, Int32(output.count))
        }
        guard written >= 0 else { throw CodecError(.encoderFailed, "libopus could not encode a frame: \(Self.describe(written))") }
        var inDTX: Int32 = 0
        _ = COpusShims_inDTX(encoder, &inDTX)
        return try packet.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(written))), inDTX != 0 || written <= 2) }
    }

    static func describe(_ status: Int32) -> String {
        opus_strerror(status).map { String(cString: $0) } ?? "error \(status)"
    }
}

@available(*, unavailable, message: "an Opus encoder belongs to one thread")
extension OpusAudioEncoder: Sendable {}

