import CAVFormat
import ScreenMedia

/// The text libav gives for an error code.
func avErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(code, &buffer, buffer.count)
    return String(nullTerminated: buffer)
}

/// Describes a video track in `format` to a libavformat muxer: the codec, its profile, the pixel format and
/// BT.601 studio-range colour (what libyuv's conversion makes), from which Matroska's `CodecPrivate` and colour
/// elements and MP4's `vpcC` are written. AV1 needs its sequence header (the track's `av1C` is made from it).
func describeVideoTrack(
    _ parameters: UnsafeMutablePointer<AVCodecParameters>, format: CodedVideoFormat, width: Int, height: Int
) throws(RecordingError) {
    parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
    parameters.pointee.width = Int32(width)
    parameters.pointee.height = Int32(height)
    parameters.pointee.profile = Int32(format.profile)
    parameters.pointee.format = (format.chroma == .yuv444 ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P).rawValue
    parameters.pointee.color_range = AVCOL_RANGE_MPEG
    parameters.pointee.color_space = AVCOL_SPC_SMPTE170M
    parameters.pointee.color_primaries = AVCOL_PRI_SMPTE170M
    parameters.pointee.color_trc = AVCOL_TRC_SMPTE170M
    switch format.codec {
    case .vp8: parameters.pointee.codec_id = AV_CODEC_ID_VP8
    case .vp9: parameters.pointee.codec_id = AV_CODEC_ID_VP9
    case .av1:
        parameters.pointee.codec_id = AV_CODEC_ID_AV1
        guard let sequenceHeader = format.sequenceHeader else {
            throw RecordingError(.unsupportedContent, "an AV1 track needs the sequence header of its first keyframe")
        }
        // libavformat makes the `av1C` record of Matroska and MP4 from the sequence header OBU.
        try setExtradata(parameters, sequenceHeader.obu, "the AV1 sequence header")
    case .h264:
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        guard let parameterSets = format.parameterSets else {
            throw RecordingError(.unsupportedContent, "an H.264 track needs the SPS and PPS of its first keyframe")
        }
        // As the `avcC` record, which the Matroska and MP4 muxers store as it is: the writers hand them samples
        // already length-prefixed (``H264AccessUnit``), so that the muxers convert nothing.
        try setExtradata(parameters, parameterSets.decoderConfigurationRecord, "the H.264 parameter sets")
    }
}

/// Hands a copy of `bytes` to libavformat as the track's extradata (padded as libav wants).
private func setExtradata(_ parameters: UnsafeMutablePointer<AVCodecParameters>, _ bytes: [UInt8], _ what: String) throws(RecordingError) {
    guard let extradata = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
        throw RecordingError(.cannotOpen, "out of memory for \(what)")
    }
    extradata.copyMemory(from: bytes, byteCount: bytes.count)
    parameters.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
    parameters.pointee.extradata_size = Int32(bytes.count)
}

/// The codec of a libavformat video track, if screenpub can decode it.
func videoCodec(of id: AVCodecID) -> VideoCodec? {
    switch id {
    case AV_CODEC_ID_VP8: .vp8
    case AV_CODEC_ID_VP9: .vp9
    case AV_CODEC_ID_AV1: .av1
    case AV_CODEC_ID_H264: .h264
    default: nil
    }
}
