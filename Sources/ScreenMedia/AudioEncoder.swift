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
