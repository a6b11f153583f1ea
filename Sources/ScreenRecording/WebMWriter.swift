import CAVFormat
import CAVFormatShims
public import ScreenMedia

/// Writes encoded VP8/VP9/AV1 frames and their metadata to a WebM file with libavformat's Matroska muxer, and the
/// stream's Opus sound when it has one; H.264 frames to a Matroska file (``RecordingContainer``: WebM cannot
/// carry H.264), the same but for its DocType, its samples length-prefixed and its `avcC` as `CodecPrivate`.
///
/// Each frame is flushed as its own cluster as soon as it is written, so a file whose writer is killed is
/// readable up to the last frame written; ``finish()`` writes the cues (seek index) and final sizes.
/// Each frame's metadata and capture times go into a WebVTT metadata track (see ``MetadataCue``). Video and
/// audio timestamps count from the first video frame's capture time, so they play in sync; sound captured
/// before that first picture is left out.
public final class WebMWriter {
    public let path: String
    public let codec: VideoCodec
    public private(set) var framesWritten = 0
    public private(set) var bytesWritten: Int64 = 0

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let videoStream: Int32
    private let metadataStream: Int32
    /// The Opus track, when the stream has sound.
    private let audioStream: Int32?
    /// The capture time of the track's first sample, and the samples its packets hold so far.
    private var audioOrigin: MediaTime?
    private var audioPosition: Int64 = 0
    /// Audio since the last cluster was closed, in ms: closed every ``audioFlushMilliseconds`` so that sound
    /// reaches the disk even while the picture is idle.
    private var audioSinceFlush: Int64 = 0
    private static let audioFlushMilliseconds: Int64 = 250
    /// The longest silence filled with empty packets, in samples (10 minutes: 30 000 packets of 20 ms).
    private static let longestFilledGap: Int64 = 600 * 48_000
    public private(set) var audioFramesWritten = 0
    /// Whether the file has an audio track.
    public var hasAudio: Bool { audioStream != nil }
    private var firstCaptureTime: MediaTime?
    private var lastTimestamp: Int64 = -1
    private let nominalFrameMilliseconds: Int64
    private var cueFormatter = MetadataCueFormatter()
    private var finished = false

    /// `AVERROR_INVALIDDATA` (`FFERRTAG('I','N','D','A')`, a macro Swift cannot import).
    static let invalidData: Int32 = -0x4144_4E49
    /// VP9 frames not shown since the last shown one (the superframe filter's cache), and its room.
    private var hiddenFramesPending = 0
    static let maximumHiddenFrames = 6

    /// Whether a VP9 frame, by its uncompressed header's first bits, is not shown: frame marker (2), profile (2,
    /// a reserved bit more at profile 3), show_existing_frame, frame_type, show_frame.
    static func isHiddenVP9Frame(header: UInt8, next: UInt8) -> Bool {
        let bits = UInt16(header) << 8 | UInt16(next)
        var position = 2
        func bit() -> Bool {
            defer { position += 1 }
            return bits & (0x8000 >> position) != 0
        }
        let profile = (bit() ? 1 : 0) | (bit() ? 2 : 0)
        if profile == 3 { _ = bit() }
        if bit() { return false }  // show_existing_frame: shown
        _ = bit()  // frame_type
        return !bit()
    }

    /// Timestamps in the file are milliseconds from the first frame (Matroska's usual 1 ms tick).
    private static let millisecondTimeBase = AVRational(num: 1, den: 1000)

    /// The stream's video type and target frame rate are stored as the file's `SCREENPUB_VIDEO_TYPE` and
    /// `SCREENPUB_ESTIMATED_FPS` tags (the properties a publisher announces), read back by ``WebMReader``.
    /// `audio` adds an Opus track (`audioPreSkip`: the encoder's lookahead in samples, which players skip).
    /// `format` is what the first keyframe declares (``CodedVideoFormat/init(codec:keyframe:)``; AV1 needs it, for
    /// its sequence header); nil means 8-bit 4:2:0.
    public init(
        path: String, codec: VideoCodec, width: Int, height: Int, framesPerSecond: Double,
        videoType: VideoType = .screen, audio: AudioProperties? = nil, audioPreSkip: Int = 312,
        format: CodedVideoFormat? = nil
    ) throws(RecordingError) {
        self.path = path
        self.codec = codec
        if let refusal = RecordingContainer.refusal(path: path, codec: codec) {
            throw RecordingError(.unsupportedContent, refusal)
        }
        let container = RecordingContainer(for: codec)
        // The rate is a peer's word (the relay bounds it where it parses it): a duration from 1 ms to 1 s whatever it is.
        nominalFrameMilliseconds = min(1000, max(1, Int64(saturating: (1000 / framesPerSecond).rounded())))
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let muxer = container == .webm ? "webm" : "matroska"
        guard avformat_alloc_output_context2(&context, nil, muxer, path) >= 0, let context else {
            throw RecordingError(.cannotOpen, "libavformat has no \(muxer) muxer")
        }
        self.context = context
        guard let video = avformat_new_stream(context, nil), let cues = avformat_new_stream(context, nil) else {
            avformat_free_context(context)
            throw RecordingError(.cannotOpen, "cannot add streams to \(path)")
        }
        do {
            try describeVideoTrack(video.pointee.codecpar, format: format ?? CodedVideoFormat(codec: codec), width: width, height: height)
        } catch {
            avformat_free_context(context)
            throw error
        }
        video.pointee.time_base = Self.millisecondTimeBase
        video.pointee.avg_frame_rate = av_d2q(framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 1, 1000)
        cues.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_SUBTITLE
        cues.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_WEBVTT
        cues.pointee.time_base = Self.millisecondTimeBase
        cues.pointee.disposition = AV_DISPOSITION_METADATA
        av_dict_set(&cues.pointee.metadata, "title", "screenpub frame metadata", 0)
        av_dict_set(&context.pointee.metadata, "encoder", "screenpub", 0)
        av_dict_set(&context.pointee.metadata, WebMTags.videoType, videoType.rawValue, 0)
        av_dict_set(&context.pointee.metadata, WebMTags.estimatedFramesPerSecond, "\(framesPerSecond)", 0)
        videoStream = video.pointee.index
        metadataStream = cues.pointee.index
        if let audio {
            guard let sound = avformat_new_stream(context, nil) else {
                avformat_free_context(context)
                throw RecordingError(.cannotOpen, "cannot add an audio stream to \(path)")
            }
            let parameters = sound.pointee.codecpar!  // avformat_new_stream allocates a stream's parameters with it
            parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            parameters.pointee.codec_id = AV_CODEC_ID_OPUS
            parameters.pointee.sample_rate = Int32(audio.sampleRate)
            av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
            parameters.pointee.initial_padding = Int32(audioPreSkip)
            // Matroska's Opus CodecPrivate is the OpusHead of RFC 7845: channels, pre-skip, input rate.
            let head = Self.opusHead(channels: audio.channels, preSkip: audioPreSkip, sampleRate: audio.sampleRate)
            guard let allocated = av_mallocz(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                avformat_free_context(context)
                throw RecordingError(.cannotOpen, "cannot allocate the audio track's header for \(path)")
            }
            let extradata = allocated.assumingMemoryBound(to: UInt8.self)
            extradata.update(from: head, count: head.count)
            parameters.pointee.extradata = extradata
            parameters.pointee.extradata_size = Int32(head.count)
            sound.pointee.time_base = Self.millisecondTimeBase
            audioStream = sound.pointee.index
        } else {
            audioStream = nil
        }

        let openStatus = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        guard openStatus >= 0 else {
            avformat_free_context(context)
            self.context = nil
            throw RecordingError(.cannotOpen, "cannot create \(path): \(avErrorText(openStatus))")
        }
        let headerStatus = avformat_write_header(context, nil)
        guard headerStatus >= 0 else {
            avio_closep(&context.pointee.pb)
            avformat_free_context(context)
            self.context = nil
            throw RecordingError(.cannotOpen, "cannot write the \(container == .webm ? "WebM" : "Matroska") header of \(path): \(avErrorText(headerStatus))")
        }
        packet = av_packet_alloc()
    }

    deinit {
        if !finished { try? finish() }
        av_packet_free(&packet)
    }

    /// Appends one encoded frame and its metadata cue, and flushes them to the file.
    public func write(_ frame: EncodedFrame) throws(RecordingError) {
        guard let context, let packet, !finished else {
            throw RecordingError(.writeFailed, "\(path) is already finished")
        }
        if codec == .vp9 {
            // libavformat's VP9 superframe filter holds frames that are not shown until a shown one joins them, 8 at
            // most with it: a seventh hidden one would wedge it, refusing every frame after. It is left out instead.
            let hidden = frame.payload.first.map { Self.isHiddenVP9Frame(header: $0, next: frame.payload.count > 1 ? frame.payload[1] : 0) } ?? false
            if hidden {
                guard hiddenFramesPending < Self.maximumHiddenFrames else {
                    throw RecordingError(.frameRefused, "\(path): more than \(Self.maximumHiddenFrames) VP9 frames in a row that are not shown; this one is left out")
                }
                hiddenFramesPending += 1
            } else {
                hiddenFramesPending = 0
            }
        }
        let first = firstCaptureTime ?? frame.captureTime
        firstCaptureTime = first
        var timestamp = (frame.captureTime - first).converted(to: 1000).value
        if timestamp <= lastTimestamp { timestamp = lastTimestamp &+ 1 }
        lastTimestamp = timestamp

        cueFormatter.format(
            MetadataCue(metadata: frame.metadata, captureTime: frame.captureTime, wallClock: frame.wallClock))
        let cueResult = cueFormatter.bytes.withUnsafeBytes { cue in
            Result { () throws(RecordingError) in
                try writePacket(
                    context, packet, stream: metadataStream, data: cue, timestamp: timestamp,
                    duration: nominalFrameMilliseconds, keyframe: true)
            }
        }
        try cueResult.get()
        if codec == .h264 {
            // Matroska holds H.264 as MP4 does: each NAL unit after its length, as the track's `avcC` says.
            guard let sample = H264AccessUnit.lengthPrefixed(annexB: frame.payload) else {
                throw RecordingError(.frameRefused, "\(path): an H.264 frame of over 4 GiB; it is left out")
            }
            try sample.withUnsafeBytes { sample in
                Result { () throws(RecordingError) in
                    try writePacket(
                        context, packet, stream: videoStream, data: sample, timestamp: timestamp,
                        duration: nominalFrameMilliseconds, keyframe: frame.isKeyframe)
                }
            }.get()
        } else {
            try writePacket(
                context, packet, stream: videoStream, data: frame.payload, timestamp: timestamp,
                duration: nominalFrameMilliseconds, keyframe: frame.isKeyframe)
        }
        // Close the cluster now so the frame is on disk even if the process is killed next.
        let flushStatus = av_write_frame(context, nil)
        guard flushStatus >= 0 else { throw writeError(flushStatus) }
        avio_flush(context.pointee.pb)
        if let error = ioError(context) { throw error }
        audioSinceFlush = 0
        framesWritten += 1
        bytesWritten = avio_tell(context.pointee.pb)
    }

    /// Appends one Opus frame. Frames captured before the first video frame are skipped (the file's time starts
    /// at its first picture); a frame at or before the previous one's time is moved just after it.
    public func writeAudio(_ frame: EncodedAudioFrame) throws(RecordingError) {
        guard let context, let packet, !finished else {
            throw RecordingError(.writeFailed, "\(path) is already finished")
        }
        guard let audioStream else { throw RecordingError(.writeFailed, "\(path) was opened without an audio track") }
        guard let first = firstCaptureTime, frame.captureTime >= first else { return }
        // The track is laid out sample by sample from its first frame: where each frame belongs is counted in
        // samples from there, and the packets so far fill the track up to `audioPosition`. Frames not sent
        // (silence between DTX frames, a muted stretch, samples lost) leave a gap, filled with empty Opus
        // packets (a TOC byte alone, which decoders play as concealed silence) of 20, 10, 5 and 2.5 ms, so that
        // players that lay packets end to end, ffmpeg among them, keep the sound in its place (within 2.5 ms,
        // an error that does not add up from gap to gap).
        let origin = audioOrigin ?? frame.captureTime
        audioOrigin = origin
        let originMilliseconds = (origin - first).converted(to: 1000).value
        let target = (frame.captureTime - origin).converted(to: 48_000).value
        if target - audioPosition > Self.longestFilledGap {
            // A gap longer than any pause of sound worth keeping in place (a publisher whose clock jumped):
            // the track goes on from here rather than write minutes of empty packets.
            audioPosition = target
        }
        func timestamp(at position: Int64) -> Int64 { originMilliseconds + position / 48 }
        // CELT fullband configurations 31, 30, 29, 28 (20, 10, 5, 2.5 ms), one frame, stereo or mono.
        for (samples, config) in [(960, 31), (480, 30), (240, 29), (120, 28)] as [(Int64, UInt8)] {
            var toc = config << 3 | (frame.channels == 2 ? 0b100 : 0)
            while target - audioPosition >= samples {
                let at = timestamp(at: audioPosition)
                try withUnsafeBytes(of: &toc) { empty throws(RecordingError) in
                    try writePacket(context, packet, stream: audioStream, data: empty, timestamp: at, duration: samples / 48, keyframe: true)
                }
                audioPosition += samples
            }
        }
        let duration = frame.duration.converted(to: 1000).value
        try writePacket(
            context, packet, stream: audioStream, data: frame.payload, timestamp: timestamp(at: audioPosition), duration: duration,
            keyframe: true)
        audioPosition += Int64(frame.samples)
        audioFramesWritten += 1
        audioSinceFlush += duration
        if audioSinceFlush >= Self.audioFlushMilliseconds {
            audioSinceFlush = 0
            let flushStatus = av_write_frame(context, nil)
            guard flushStatus >= 0 else { throw writeError(flushStatus) }
            avio_flush(context.pointee.pb)
            if let error = ioError(context) { throw error }
        }
        bytesWritten = avio_tell(context.pointee.pb)
    }

    /// RFC 7845's identification header: "OpusHead", version 1, channels, pre-skip, input rate, gain 0,
    /// mapping family 0 (mono or stereo), little-endian.
    static func opusHead(channels: Int, preSkip: Int, sampleRate: Int) -> [UInt8] {
        var head = Array("OpusHead".utf8)
        head.append(1)
        head.append(UInt8(channels))
        head += [UInt8(preSkip & 0xFF), UInt8(preSkip >> 8 & 0xFF)]
        head += (0..<4).map { UInt8(sampleRate >> (8 * $0) & 0xFF) }
        head += [0, 0, 0]
        return head
    }

    /// Writes the seek index and final sizes and closes the file. Safe to call more than once.
    public func finish() throws(RecordingError) {
        guard !finished, let context else { return }
        finished = true
        let trailerStatus = av_write_trailer(context)
        bytesWritten = avio_tell(context.pointee.pb)
        let closeStatus = avio_closep(&context.pointee.pb)
        avformat_free_context(context)
        self.context = nil
        if trailerStatus < 0 { throw writeError(trailerStatus) }
        if closeStatus < 0 { throw writeError(closeStatus) }
    }

    private func writePacket(
        _ context: UnsafeMutablePointer<AVFormatContext>, _ packet: UnsafeMutablePointer<AVPacket>,
        stream: Int32, data: UnsafeRawBufferPointer, timestamp: Int64, duration: Int64, keyframe: Bool
    ) throws(RecordingError) {
        // The packet borrows the caller's bytes (no AVBufferRef): av_write_frame does not keep them.
        packet.pointee.data = UnsafeMutablePointer(mutating: data.baseAddress?.assumingMemoryBound(to: UInt8.self))
        packet.pointee.size = Int32(data.count)
        packet.pointee.stream_index = stream
        packet.pointee.pts = timestamp
        packet.pointee.dts = timestamp
        packet.pointee.duration = duration
        packet.pointee.flags = keyframe ? AV_PKT_FLAG_KEY : 0
        packet.pointee.pos = -1
        let status = av_write_frame(context, packet)
        packet.pointee.data = nil
        packet.pointee.size = 0
        if status == Self.invalidData {
            throw RecordingError(.frameRefused, "libavformat refused a frame of \(path) as invalid data (\(avErrorText(status))); it is left out")
        }
        guard status >= 0 else { throw writeError(status) }
    }

    private func ioError(_ context: UnsafeMutablePointer<AVFormatContext>) -> RecordingError? {
        guard let io = context.pointee.pb, io.pointee.error < 0 else { return nil }
        return writeError(io.pointee.error)
    }

    private func writeError(_ status: Int32) -> RecordingError {
        RecordingError(
            .writeFailed,
            "writing \(path) failed: \(avErrorText(status)); the \(framesWritten) frames written before stay readable")
    }
}

@available(*, unavailable, message: "a libavformat context belongs to one thread")
extension WebMWriter: Sendable {}

/// Names of the file-level tags screenpub writes.
enum WebMTags {
    static let videoType = "SCREENPUB_VIDEO_TYPE"
    static let estimatedFramesPerSecond = "SCREENPUB_ESTIMATED_FPS"
}
