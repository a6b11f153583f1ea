/// The fields of an AV1 sequence header OBU (AV1 specification §5.5) that containers and players need: those of
/// the codec string (``CodedVideoFormat``) and the `av1C` configuration record of Matroska, WebM
/// and ISO-BMFF (the AV1 ISOBMFF binding §2.3).
///
/// Parsed from a temporal unit in the low-overhead format (OBUs with size fields, as libaom writes them), which
/// for a keyframe holds the sequence header. The viewer's JavaScript reads the same fields (viewer.js).
public struct AV1SequenceHeader: Sendable, Hashable {
    public var profile: Int
    /// `seq_level_idx[0]`: level 2.0 is 0, 2.1 is 1, … (X.Y = 2 + index / 4, index % 4); 31 is "no limit".
    public var level: Int
    /// `seq_tier[0]`: 0 main, 1 high.
    public var tier: Int
    public var bitDepth: Int
    public var monochrome: Bool
    public var chromaSubsamplingX: Bool
    public var chromaSubsamplingY: Bool
    public var chromaSamplePosition: Int
    /// The whole sequence header OBU (its header, size field and payload), as containers store it.
    public var obu: [UInt8]

    static let sequenceHeaderType = 1

    /// Finds and parses the sequence header in `temporalUnit`; nil when it has none (an inter frame) or the
    /// bytes are not a well-formed sequence of OBUs.
    public init?(temporalUnit: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < temporalUnit.count {
            let start = offset
            let header = temporalUnit[offset]
            guard header & 0x80 == 0 else { return nil }  // forbidden bit
            let type = Int(header >> 3) & 0x0F
            let hasExtension = header & 0x04 != 0
            let hasSize = header & 0x02 != 0
            offset += hasExtension ? 2 : 1
            let size: Int
            if hasSize {
                guard let (value, length) = Self.leb128(temporalUnit, at: offset) else { return nil }
                offset += length
                size = value
            } else {
                size = temporalUnit.count - offset
            }
            guard size >= 0, offset + size <= temporalUnit.count else { return nil }
            if type == Self.sequenceHeaderType {
                var reader = BitReader(UnsafeRawBufferPointer(rebasing: temporalUnit[offset..<(offset + size)]))
                guard let parsed = Self.parse(&reader) else { return nil }
                self = parsed
                obu = Array(temporalUnit[start..<(offset + size)])
                if !hasSize {
                    // Containers want OBUs with sizes: rewrite the header with the size field set.
                    obu = [header | 0x02] + (hasExtension ? [temporalUnit[start + 1]] : []) + Self.leb128Bytes(size)
                        + Array(temporalUnit[offset..<(offset + size)])
                }
                return
            }
            offset += size
        }
        return nil
    }

    public init?(temporalUnit: [UInt8]) {
        guard let parsed = temporalUnit.withUnsafeBytes({ AV1SequenceHeader(temporalUnit: $0) }) else { return nil }
        self = parsed
    }

    /// The `AV1CodecConfigurationRecord` (`av1C`): four bytes of the fields above, then the sequence header OBU.
    public var configurationRecord: [UInt8] {
        let first: UInt8 = 0x81  // marker 1, version 1
        let second = UInt8(profile << 5) | UInt8(level & 0x1F)
        let third =
            UInt8(tier << 7) | (bitDepth > 8 ? 0x40 : 0) | (bitDepth == 12 ? 0x20 : 0) | (monochrome ? 0x10 : 0)
            | (chromaSubsamplingX ? 0x08 : 0) | (chromaSubsamplingY ? 0x04 : 0) | UInt8(chromaSamplePosition & 3)
        return [first, second, third, 0] + obu
    }

    private init(
        profile: Int, level: Int, tier: Int, bitDepth: Int, monochrome: Bool, chromaSubsamplingX: Bool,
        chromaSubsamplingY: Bool, chromaSamplePosition: Int
    ) {
        self.profile = profile
        self.level = level
        self.tier = tier
        self.bitDepth = bitDepth
        self.monochrome = monochrome
        self.chromaSubsamplingX = chromaSubsamplingX
        self.chromaSubsamplingY = chromaSubsamplingY
        self.chromaSamplePosition = chromaSamplePosition
        obu = []
    }

    // swiftlint:disable:next function_body_length
    private static func parse(_ bits: inout BitReader) -> AV1SequenceHeader? {
        guard let profile = bits.read(3), let stillPicture = bits.read(1), let reduced = bits.read(1) else { return nil }
        _ = stillPicture
        var level = 0, tier = 0
        if reduced == 1 {
            guard let index = bits.read(5) else { return nil }
            level = index
        } else {
            guard let timingInfoPresent = bits.read(1) else { return nil }
            var decoderModelInfoPresent = 0, bufferDelayLength = 0
            if timingInfoPresent == 1 {
                guard bits.skip(64), let equalPictureInterval = bits.read(1) else { return nil }
                if equalPictureInterval == 1 { guard bits.skipUVLC() else { return nil } }
                guard let present = bits.read(1) else { return nil }
                decoderModelInfoPresent = present
                if present == 1 {
                    guard let delayLength = bits.read(5), bits.skip(32 + 5 + 5) else { return nil }
                    bufferDelayLength = delayLength + 1
                }
            }
            guard let initialDisplayDelayPresent = bits.read(1), let operatingPoints = bits.read(5) else { return nil }
            for point in 0...operatingPoints {
                guard bits.skip(12), let index = bits.read(5) else { return nil }
                var pointTier = 0
                if index > 7 { guard let value = bits.read(1) else { return nil }; pointTier = value }
                if point == 0 { (level, tier) = (index, pointTier) }
                if decoderModelInfoPresent == 1 {
                    guard let modelPresent = bits.read(1) else { return nil }
                    if modelPresent == 1 { guard bits.skip(2 * bufferDelayLength + 1) else { return nil } }
                }
                if initialDisplayDelayPresent == 1 {
                    guard let delayPresent = bits.read(1) else { return nil }
                    if delayPresent == 1 { guard bits.skip(4) else { return nil } }
                }
            }
        }
        guard let widthBits = bits.read(4), let heightBits = bits.read(4),
            bits.skip(widthBits + 1 + heightBits + 1)
        else { return nil }
        if reduced == 0 {
            guard let frameIdsPresent = bits.read(1) else { return nil }
            if frameIdsPresent == 1 { guard bits.skip(4 + 3) else { return nil } }
        }
        // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter
        guard bits.skip(3) else { return nil }
        if reduced == 0 {
            // enable_interintra_compound, enable_masked_compound, enable_warped_motion, enable_dual_filter
            guard bits.skip(4), let orderHint = bits.read(1) else { return nil }
            if orderHint == 1 { guard bits.skip(2) else { return nil } }  // jnt_comp, ref_frame_mvs
            guard let chooseScreenContentTools = bits.read(1) else { return nil }
            var forceScreenContentTools = 2
            if chooseScreenContentTools == 0 {
                guard let value = bits.read(1) else { return nil }
                forceScreenContentTools = value
            }
            if forceScreenContentTools > 0 {
                guard let chooseIntegerMV = bits.read(1) else { return nil }
                if chooseIntegerMV == 0 { guard bits.skip(1) else { return nil } }
            }
            if orderHint == 1 { guard bits.skip(3) else { return nil } }
        }
        // enable_superres, enable_cdef, enable_restoration
        guard bits.skip(3) else { return nil }
        // color_config()
        guard let highBitDepth = bits.read(1) else { return nil }
        var bitDepth = highBitDepth == 1 ? 10 : 8
        if profile == 2 && highBitDepth == 1 {
            guard let twelveBit = bits.read(1) else { return nil }
            if twelveBit == 1 { bitDepth = 12 }
        }
        var monochrome = false
        if profile != 1 {
            guard let value = bits.read(1) else { return nil }
            monochrome = value == 1
        }
        guard let colourDescriptionPresent = bits.read(1) else { return nil }
        var (primaries, transfer, matrix) = (2, 2, 2)
        if colourDescriptionPresent == 1 {
            guard let p = bits.read(8), let t = bits.read(8), let m = bits.read(8) else { return nil }
            (primaries, transfer, matrix) = (p, t, m)
        }
        var subsamplingX = true, subsamplingY = true, samplePosition = 0
        if monochrome {
            guard bits.skip(1) else { return nil }  // color_range
        } else if primaries == 1 && transfer == 13 && matrix == 0 {
            (subsamplingX, subsamplingY) = (false, false)  // sRGB: 4:4:4
        } else {
            guard bits.skip(1) else { return nil }  // color_range
            switch profile {
            case 0: (subsamplingX, subsamplingY) = (true, true)
            case 1: (subsamplingX, subsamplingY) = (false, false)
            default:
                if bitDepth == 12 {
                    guard let x = bits.read(1) else { return nil }
                    subsamplingX = x == 1
                    if subsamplingX {
                        guard let y = bits.read(1) else { return nil }
                        subsamplingY = y == 1
                    } else {
                        subsamplingY = false
                    }
                } else {
                    (subsamplingX, subsamplingY) = (true, false)
                }
            }
            if subsamplingX && subsamplingY {
                guard let position = bits.read(2) else { return nil }
                samplePosition = position
            }
        }
        return AV1SequenceHeader(
            profile: profile, level: level, tier: tier, bitDepth: bitDepth, monochrome: monochrome,
            chromaSubsamplingX: subsamplingX, chromaSubsamplingY: subsamplingY, chromaSamplePosition: samplePosition)
    }

    private static func leb128(_ bytes: UnsafeRawBufferPointer, at start: Int) -> (Int, Int)? {
        var value = 0
        for index in 0..<8 {
            guard start + index < bytes.count else { return nil }
            let byte = bytes[start + index]
            value |= Int(byte & 0x7F) << (7 * index)
            if byte & 0x80 == 0 { return (value, index + 1) }
        }
        return nil
    }

    private static func leb128Bytes(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = [], rest = value
        repeat {
            let byte = UInt8(rest & 0x7F)
            rest >>= 7
            bytes.append(rest > 0 ? byte | 0x80 : byte)
        } while rest > 0
        return bytes
    }
}
