import CAVFormat
import ScreenMedia

/// The text libav gives for an error code.
func avErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(code, &buffer, buffer.count)
    return String(nullTerminated: buffer)
}

/// Describes a video track of `codec` to a libavformat muxer. AV1 needs its sequence header (the track's
/// `av1C` is made from it); VP8 and VP9 describe themselves in their frames.
func describeVideoTrack(
    _ parameters: UnsafeMutablePointer<AVCodecParameters>, codec: VideoCodec, width: Int, height: Int,
    sequenceHeader: AV1SequenceHeader?
) throws(RecordingError) {
    parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
    parameters.pointee.width = Int32(width)
    parameters.pointee.height = Int32(height)
    switch codec {
    case .vp8: parameters.pointee.codec_id = AV_CODEC_ID_VP8
    case .vp9: parameters.pointee.codec_id = AV_CODEC_ID_VP9
    case .av1:
        parameters.pointee.codec_id = AV_CODEC_ID_AV1
        guard let sequenceHeader else {
            throw RecordingError(.unsupportedContent, "an AV1 track needs the sequence header of its first keyframe")
        }
        // libavformat makes the `av1C` record of Matroska and MP4 from the sequence header OBU.
        let bytes = sequenceHeader.obu
        guard let extradata = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw RecordingError(.cannotOpen, "out of memory for the AV1 sequence header")
        }
        extradata.copyMemory(from: bytes, byteCount: bytes.count)
        parameters.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        parameters.pointee.extradata_size = Int32(bytes.count)
    }
}

/// The codec of a libavformat video track, if screenpub can decode it.
func videoCodec(of id: AVCodecID) -> VideoCodec? {
    switch id {
    case AV_CODEC_ID_VP8: .vp8
    case AV_CODEC_ID_VP9: .vp9
    case AV_CODEC_ID_AV1: .av1
    default: nil
    }
}
