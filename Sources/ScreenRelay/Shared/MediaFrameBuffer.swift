import NIOCore
import ScreenMedia
import ScreenWire

extension MediaFrameHeader {
    /// The format the keyframe `buffer` holds (a whole media message with this header) declares, for the writers
    /// that describe a track with it (AV1's sequence header, the chroma format); nil for an inter frame.
    func codedFormat(in buffer: ByteBuffer) -> CodedVideoFormat? {
        guard isKeyframe else { return nil }
        return buffer.withUnsafeReadableBytes { bytes in
            (try? MediaFrameHeader.parse(bytes).payload).flatMap {
                CodedVideoFormat(codec: codec, keyframe: UnsafeRawBufferPointer(rebasing: bytes[$0]))
            }
        }
    }
}
