/// How a stream's pictures are coded, as its keyframe says (the AV1 sequence header; the VP9 frame header; the
/// H.264 sequence parameter set):
/// what containers (`av1C`, `vpcC`, Matroska's colour elements), playlists (`CODECS`) and decoders (WebCodecs)
/// are told. Read from the bitstream rather than from what a publisher announced, so that a relay describes
/// what it really stores.
public struct CodedVideoFormat: Sendable, Hashable {
    public var codec: VideoCodec
    /// The codec's profile: AV1 0 (Main, 4:2:0) or 1 (High, 4:4:4); VP9 0 (8-bit 4:2:0) or 1 (8-bit 4:4:4);
    /// H.264's `profile_idc` (66, Baseline: screenpub's encoder makes Constrained Baseline).
    public var profile: Int
    public var chroma: ChromaFormat
    public var bitDepth: Int
    /// AV1's sequence header, which containers store whole; nil for VP8 and VP9.
    public var sequenceHeader: AV1SequenceHeader?
    /// H.264's parameter sets, from which containers make `avcC`; nil for the other codecs.
    public var parameterSets: H264ParameterSets?

    /// What screenpub's encoders make unless told otherwise: 8-bit 4:2:0 in the codec's first profile.
    public init(codec: VideoCodec, chroma: ChromaFormat = .yuv420) {
        self.codec = codec
        self.chroma = codec == .vp8 || codec == .h264 ? .yuv420 : chroma
        profile = codec == .h264 ? Self.h264BaselineProfile : self.chroma == .yuv444 ? 1 : 0
        bitDepth = 8
        sequenceHeader = nil
        parameterSets = nil
    }

    /// The format `keyframe` (a payload as it goes on the wire) declares; nil when it declares none (an inter
    /// frame, an AV1 temporal unit without a sequence header, bytes that are not a frame of `codec`).
    public init?(codec: VideoCodec, keyframe: UnsafeRawBufferPointer) {
        switch codec {
        case .vp8:
            // A VP8 keyframe starts with a 3-byte tag (bit 0 clear) and the start code 9d 01 2a; VP8 is 4:2:0 only.
            guard keyframe.count >= 6, keyframe[0] & 1 == 0, keyframe[3] == 0x9D, keyframe[4] == 0x01, keyframe[5] == 0x2A else { return nil }
            self.init(codec: .vp8)
        case .vp9:
            guard let header = VP9KeyframeHeader(keyframe) else { return nil }
            self.init(codec: .vp9, chroma: header.chroma)
            (profile, bitDepth) = (header.profile, header.bitDepth)
        case .av1:
            guard let header = AV1SequenceHeader(temporalUnit: keyframe), !header.monochrome,
                header.chromaSubsamplingX == header.chromaSubsamplingY
            else { return nil }
            self.init(codec: .av1, chroma: header.chromaSubsamplingX ? .yuv420 : .yuv444)
            (profile, bitDepth, sequenceHeader) = (header.profile, header.bitDepth, header)
        case .h264:
            // 4:2:0 only: what screenpub's encoder makes and what every H.264 decoder takes.
            guard let sets = H264ParameterSets(accessUnit: keyframe), sets.chromaFormat == 1 else { return nil }
            self.init(codec: .h264)
            (profile, parameterSets) = (sets.profile, sets)
        }
    }

    /// H.264's Baseline profile (`profile_idc` 66).
    public static let h264BaselineProfile = 66

    public init?(codec: VideoCodec, keyframe: [UInt8]) {
        guard let format = keyframe.withUnsafeBytes({ CodedVideoFormat(codec: codec, keyframe: $0) }) else { return nil }
        self = format
    }

    /// The WebCodecs / RFC 6381 codec string of a stream in this format at this size and rate: AV1's
    /// `av01.P.LLT.DD` from its sequence header, VP9's `vp09.PP.LL.DD` at the lowest level the stream fits, VP8's
    /// `vp8` (`mp4`: `vp08.00.LL.08`, as MP4 playlists name it), H.264's `avc1.PPCCLL` from its SPS. A 4:4:4 stream gets the long form, which names
    /// its chroma subsampling and BT.601 colour: the short form means 4:2:0.
    public func codecString(width: Int, height: Int, framesPerSecond: Double, mp4: Bool = false) -> String {
        let depth = bitDepth < 10 ? "0\(bitDepth)" : "\(bitDepth)"
        // SMPTE 170M (BT.601) primaries, transfer and matrix, then studio range: `F` is one digit for AV1, two for VP9.
        let bt601Colour = "06.06.06"
        switch codec {
        case .av1:
            let level = sequenceHeader?.level ?? 8, tier = sequenceHeader?.tier ?? 0
            let short = "av01.\(profile).\(level < 10 ? "0" : "")\(level)\(tier == 0 ? "M" : "H").\(depth)"
            return chroma == .yuv444 ? short + ".0.000." + bt601Colour + ".0" : short
        case .h264:
            // Without parameter sets: Constrained Baseline at the level of a 1080p screen at 30 fps (4.0).
            return "avc1." + (parameterSets?.profileLevelHex ?? "42C028")
        case .vp9, .vp8:
            let level = VideoCodec.vpxLevel(width: width, height: height, framesPerSecond: framesPerSecond)
            let levelDigits = level < 10 ? "0\(level)" : "\(level)"
            if codec == .vp8 { return mp4 ? "vp08.00.\(levelDigits).08" : "vp8" }
            let short = "vp09.0\(profile).\(levelDigits).\(depth)"
            return chroma == .yuv444 ? short + ".03." + bt601Colour + ".00" : short
        }
    }
}

/// The fields of a VP9 keyframe's uncompressed header (VP9 bitstream specification §6.2) that say its format:
/// profile, bit depth and chroma subsampling.
struct VP9KeyframeHeader {
    var profile: Int
    var bitDepth: Int
    var chroma: ChromaFormat

    init?(_ frame: UnsafeRawBufferPointer) {
        var bits = BitReader(frame)
        guard bits.read(2) == 2, let low = bits.read(1), let high = bits.read(1) else { return nil }
        profile = high << 1 | low
        if profile == 3 { guard bits.skip(1) else { return nil } }
        // show_existing_frame, frame_type (0: keyframe), show_frame, error_resilient_mode, the sync code.
        guard bits.read(1) == 0, bits.read(1) == 0, bits.skip(2), bits.read(24) == 0x49_83_42 else { return nil }
        bitDepth = 8
        if profile >= 2 {
            guard let tenOrTwelve = bits.read(1) else { return nil }
            bitDepth = tenOrTwelve == 1 ? 12 : 10
        }
        guard let colourSpace = bits.read(3) else { return nil }
        var subsampled = true
        let rgb = 7
        if colourSpace != rgb {
            guard bits.skip(1) else { return nil }  // colour range
            if profile == 1 || profile == 3 {
                guard let x = bits.read(1), let y = bits.read(1) else { return nil }
                guard x == y else { return nil }  // 4:2:2 and 4:4:0: not what screenpub reads
                subsampled = x == 1
            }
        } else {
            subsampled = false
        }
        chroma = subsampled ? .yuv420 : .yuv444
    }
}
