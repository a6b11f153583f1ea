import COpus
import COpusShims
public import ScreenMedia

/// Decodes Opus packets back to 48 kHz interleaved float samples (screensub, the tests); a missing packet is
/// concealed, or rebuilt from the next one's in-band FEC.
public final class OpusAudioDecoder {
    public let channels: Int
    private let decoder: OpaquePointer
    private var pcm: [Float]

    public init(channels: Int) throws(CodecError) {
        var status: Int32 = 0
        guard channels == 1 || channels == 2,
            let decoder = opus_decoder_create(Int32(OpusAudioEncoder.sampleRate), Int32(channels), &status), status == OPUS_OK
        else {
            throw CodecError(.unsupportedConfiguration, "libopus cannot make a \(channels)-channel decoder: \(OpusAudioEncoder.describe(status))")
        }
        self.decoder = decoder
        self.channels = channels
        // 120 ms, the longest Opus frame.
        pcm = [Float](repeating: 0, count: 5760 * channels)
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes `packet` (nil: it was lost; `fromNextPacket` rebuilds it from the next packet's FEC) and hands
    /// `body` the interleaved samples. A lost or rebuilt frame is one 20 ms frame (libopus needs its length).
    public func decode<Result>(
        _ packet: UnsafeRawBufferPointer?, fromNextPacket: Bool = false, _ body: (UnsafeBufferPointer<Float>) throws -> Result
    ) throws -> Result {
        // `pcm` is allocated at its full size once, so its buffer has a base address.
        let frames = pcm.withUnsafeMutableBufferPointer { output in
            opus_decode_float(
                decoder, packet?.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(packet?.count ?? 0), output.baseAddress!,
                Int32(packet == nil || fromNextPacket ? OpusAudioEncoder.frameSamples : output.count / channels), fromNextPacket ? 1 : 0)
        }
        guard frames >= 0 else { throw CodecError(.corruptInput, "libopus could not decode a packet: \(OpusAudioEncoder.describe(frames))") }
        return try pcm.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0.prefix(Int(frames) * channels))) }
    }
}

@available(*, unavailable, message: "an Opus decoder belongs to one thread")
extension OpusAudioDecoder: Sendable {}
