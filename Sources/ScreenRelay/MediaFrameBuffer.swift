import NIOCore
import ScreenMedia
import ScreenWire

extension MediaFrameHeader {
    /// The AV1 sequence header in the frame `buffer` holds (a whole media message with this header), for the
    /// writers that describe an AV1 track with it; nil for VP8/VP9 and for frames without one.
    func sequenceHeader(in buffer: ByteBuffer) -> AV1SequenceHeader? {
        guard codec == .av1 else { return nil }
        return buffer.withUnsafeReadableBytes { bytes in
            (try? MediaFrameHeader.parse(bytes).payload).flatMap {
                AV1SequenceHeader(temporalUnit: UnsafeRawBufferPointer(rebasing: bytes[$0]))
            }
        }
    }
}
