public enum VideoCodec: String, Sendable, Hashable, Codable, CaseIterable {
    case vp8
    case vp9
    /// AV1, 8-bit, Main profile (4:2:0) or High (4:4:4), as libaom's realtime encoder produces it (payloads are
    /// temporal units in the low-overhead bitstream format; keyframes carry the sequence header, see
    /// ``AV1SequenceHeader``).
    case av1
    /// H.264, 8-bit 4:2:0, Constrained Baseline, as openh264's screen-content encoder produces it (payloads
    /// are access units in the Annex B byte-stream format; keyframes carry their SPS and PPS, see
    /// ``H264ParameterSets``): the codec every browser and native player decodes.
    case h264
}

extension VideoCodec {
    /// The codec as people know it: "AV1", "VP9", "VP8", "H.264".
    public var displayName: String {
        switch self {
        case .vp8: "VP8"
        case .vp9: "VP9"
        case .av1: "AV1"
        case .h264: "H.264"
        }
    }

    /// The lowest VP9 level (10: 1.0 … 62: 6.2; VP8 in MP4 reuses the table) whose maximum luma picture size and
    /// sample rate a stream of this size and frame rate fits.
    public static func vpxLevel(width: Int, height: Int, framesPerSecond: Double) -> Int {
        let picture = width * height
        let rate = Double(picture) * max(framesPerSecond, 1)
        // (level, maximum luma picture size, maximum luma sample rate) from the VP9 levels table.
        let levels: [(Int, Int, Double)] = [
            (10, 36_864, 829_440), (11, 73_728, 2_764_800), (20, 122_880, 4_608_000), (21, 245_760, 9_216_000),
            (30, 552_960, 20_736_000), (31, 983_040, 36_864_000), (40, 2_228_224, 83_558_400), (41, 2_228_224, 160_432_128),
            (50, 8_912_896, 311_951_360), (51, 8_912_896, 588_251_136), (52, 8_912_896, 1_176_502_272),
            (60, 35_651_584, 1_176_502_272), (61, 35_651_584, 2_353_004_544), (62, 35_651_584, 4_706_009_088),
        ]
        return levels.first { picture <= $0.1 && rate <= $0.2 }?.0 ?? 62
    }
}
