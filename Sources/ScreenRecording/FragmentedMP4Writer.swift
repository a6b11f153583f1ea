import CAVFormat
public import ScreenMedia

/// Packs encoded VP8/VP9/AV1/H.264 frames into fragmented MP4 (CMAF) in memory with libavformat's mp4 muxer: an
/// initialization segment (`ftyp` + `moov`, no samples) and then one fragment (`moof` + `mdat`) per frame,
/// which HLS segments are made of. Each frame is its own fragment so that the frame's timed metadata (an
/// ``EventMessageBox``) can sit right ahead of it, and a segment can end at any frame. H.264 goes in an `avc1`
/// sample entry with its `avcC`, each sample its access unit length-prefixed (``H264AccessUnit``).
public final class FragmentedMP4Writer {
    /// Ticks per second of the track's timeline (the MPEG-TS clock players expect).
    public static let timescale: Int32 = 90_000

    public let codec: VideoCodec
    public let width: Int
    public let height: Int
    /// `ftyp` and `moov`: what a player needs before any fragment (`#EXT-X-MAP`).
    public private(set) var initializationSegment: [UInt8] = []

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// What the muxer has written since it was last taken.
    private var output: [UInt8] = []

    /// The timing H.264 sequence parameter sets get, in `avcC` and in the samples; nil leaves them as they come.
    public let h264Timing: H264Timing?

    /// `format` is what the first keyframe declares (AV1 needs it, for its sequence header); nil means 8-bit 4:2:0.
    /// `h264Timing` goes into H.264's sequence parameter sets that have no timing of their own, for players that
    /// read each frame's duration from there (``H264Timing``).
    public init(
        codec: VideoCodec, width: Int, height: Int, framesPerSecond: Double, format: CodedVideoFormat? = nil, h264Timing: H264Timing? = nil
    ) throws(RecordingError) {
        self.codec = codec
        self.width = width
        self.height = height
        self.h264Timing = codec == .h264 ? h264Timing : nil
        var format = format ?? CodedVideoFormat(codec: codec)
        if let h264Timing = self.h264Timing, let sets = format.parameterSets, let timed = h264Timing.sequenceParameterSet(sets.sequenceParameterSet) {
            format.parameterSets?.sequenceParameterSet = timed
        }
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        guard avformat_alloc_output_context2(&context, nil, "mp4", nil) >= 0, let context else {
            throw RecordingError(.cannotOpen, "libavformat has no MP4 muxer")
        }
        self.context = context
        guard let video = avformat_new_stream(context, nil) else {
            throw RecordingError(.cannotOpen, "cannot add a video track to the MP4 muxer")
        }
        let parameters = video.pointee.codecpar!  // avformat_new_stream allocates a stream's parameters with it
        try describeVideoTrack(parameters, format: format, width: width, height: height)
        video.pointee.time_base = AVRational(num: 1, den: Self.timescale)
        video.pointee.avg_frame_rate = av_d2q(framesPerSecond, 1000)

        // The muxer writes into `output` through a callback that gets this writer back from `opaque`.
        let bufferSize: Int32 = 64 << 10
        guard let buffer = av_malloc(Int(bufferSize)),
            let io = avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self), bufferSize, 1, Unmanaged.passUnretained(self).toOpaque(), nil,
                { opaque, bytes, count in
                    guard let opaque, let bytes, count > 0 else { return 0 }
                    let writer = Unmanaged<FragmentedMP4Writer>.fromOpaque(opaque).takeUnretainedValue()
                    writer.output.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
                    return count
                }, nil)
        else {
            throw RecordingError(.cannotOpen, "cannot allocate the MP4 muxer's output")
        }
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var options: OpaquePointer? = nil
        // Fragments when told (one per frame), no samples in `moov`, offsets from each `moof`, CMAF brands.
        av_dict_set(&options, "movflags", "frag_custom+empty_moov+default_base_moof+cmaf+skip_sidx+skip_trailer", 0)
        av_dict_set(&options, "video_track_timescale", "\(Self.timescale)", 0)
        let status = avformat_write_header(context, &options)
        av_dict_free(&options)
        guard status >= 0 else {
            throw RecordingError(.cannotOpen, "cannot start an MP4 stream: \(avErrorText(status))")
        }
        avio_flush(io)
        initializationSegment = output
        output.removeAll(keepingCapacity: true)
        packet = av_packet_alloc()
    }

    deinit {
        av_packet_free(&packet)
        if let context {
            if let io = context.pointee.pb {
                av_free(io.pointee.buffer)
                var owned: UnsafeMutablePointer<AVIOContext>? = io
                avio_context_free(&owned)
            }
            avformat_free_context(context)
        }
    }

    /// One frame as a fragment (`moof` + `mdat`): shown at `time` for `duration`, both in ``timescale`` ticks on
    /// the track's timeline (which must not go back).
    public func fragment(payload: UnsafeRawBufferPointer, isKeyframe: Bool, time: Int64, duration: Int64) throws(RecordingError) -> [UInt8] {
        guard codec == .h264 else { return try muxedFragment(payload: payload, isKeyframe: isKeyframe, time: time, duration: duration) }
        guard let sample = H264AccessUnit.lengthPrefixed(annexB: payload, addingTiming: h264Timing) else {
            throw RecordingError(.writeFailed, "an H.264 frame of over 4 GiB cannot be an MP4 sample")
        }
        return try sample.withUnsafeBytes { sample in
            Result { () throws(RecordingError) in try muxedFragment(payload: sample, isKeyframe: isKeyframe, time: time, duration: duration) }
        }.get()
    }

    private func muxedFragment(payload: UnsafeRawBufferPointer, isKeyframe: Bool, time: Int64, duration: Int64) throws(RecordingError) -> [UInt8] {
        guard let context, let packet else { throw RecordingError(.writeFailed, "the MP4 muxer is closed") }
        // The packet borrows the caller's bytes (no AVBufferRef): the muxer copies them into the fragment.
        packet.pointee.data = UnsafeMutablePointer(mutating: payload.baseAddress?.assumingMemoryBound(to: UInt8.self))
        packet.pointee.size = Int32(payload.count)
        packet.pointee.stream_index = 0
        packet.pointee.pts = time
        packet.pointee.dts = time
        packet.pointee.duration = max(1, duration)
        packet.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
        packet.pointee.pos = -1
        let written = av_write_frame(context, packet)
        packet.pointee.data = nil
        packet.pointee.size = 0
        guard written >= 0 else { throw RecordingError(.writeFailed, "the MP4 muxer refused a frame: \(avErrorText(written))") }
        // With frag_custom, a null packet closes the fragment: its moof and mdat are written now.
        let flushed = av_write_frame(context, nil)
        guard flushed >= 0 else { throw RecordingError(.writeFailed, "the MP4 muxer could not close a fragment: \(avErrorText(flushed))") }
        avio_flush(context.pointee.pb)
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }
}

@available(*, unavailable, message: "a libavformat context belongs to one thread")
extension FragmentedMP4Writer: Sendable {}
