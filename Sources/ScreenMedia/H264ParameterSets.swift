/// The parameter sets of an H.264 keyframe (ITU-T H.264 §7.3.2.1, §7.3.2.2): what the codec string
/// (``CodedVideoFormat``, `avc1.PPCCLL`), the `avcC` record of MP4 and Matroska and WebCodecs' `description` are
/// made from.
///
/// Payloads are access units in the Annex B byte-stream format (NAL units after 00 00 01 or 00 00 00 01 start
/// codes), as openh264 writes them; a keyframe carries its sequence and picture parameter sets before its IDR slice.
public struct H264ParameterSets: Sendable, Hashable {
    /// `profile_idc`: 66 Baseline, 77 Main, 100 High.
    public var profile: Int
    /// The six constraint flags and two reserved bits that follow `profile_idc`.
    public var constraints: Int
    /// `level_idc`: ten times the level (31 is 3.1).
    public var level: Int
    /// `chroma_format_idc` (1 is 4:2:0, 3 is 4:4:4); 1 unless the profile carries it.
    public var chromaFormat: Int
    /// The sequence parameter set NAL unit (its header and payload, without start code), as `avcC` stores it.
    public var sequenceParameterSet: [UInt8]
    /// The picture parameter set NAL unit, likewise.
    public var pictureParameterSet: [UInt8]

    static let sequenceParameterSetType: UInt8 = 7
    static let pictureParameterSetType: UInt8 = 8
    static let idrSliceType: UInt8 = 5

    /// The parameter sets of `accessUnit`; nil when it holds no SPS and PPS (an inter frame) or they cannot be read.
    public init?(accessUnit: UnsafeRawBufferPointer) {
        var sequence: [UInt8]?, picture: [UInt8]?
        for unit in H264NALUnits(accessUnit) {
            guard let header = unit.first else { continue }
            switch header & 0x1F {
            case Self.sequenceParameterSetType where sequence == nil: sequence = Array(unit)
            case Self.pictureParameterSetType where picture == nil: picture = Array(unit)
            default: break
            }
        }
        guard let sequence, let picture, sequence.count >= 4 else { return nil }
        let payload = Self.removingEmulationPrevention(sequence.dropFirst())
        guard payload.count >= 3 else { return nil }
        // What no H.264 stream holds (an unknown profile, reserved constraint bits set, a level past 6.2) is not
        // taken for one: a container's avcC and a playlist's CODECS are made of these.
        guard Self.knownProfiles.contains(Int(payload[0])), payload[1] & 0x03 == 0, (9...62).contains(payload[2]) else { return nil }
        profile = Int(payload[0])
        constraints = Int(payload[1])
        level = Int(payload[2])
        chromaFormat = 1
        if Self.profilesWithChromaFormat.contains(profile) {
            // profile_idc, the constraint flags and level_idc, then seq_parameter_set_id and chroma_format_idc.
            let format = payload.withUnsafeBytes { bytes -> Int? in
                var bits = BitReader(bytes)
                guard bits.skip(24), bits.readExpGolomb() != nil else { return nil }
                return bits.readExpGolomb()
            }
            guard let format, format <= 3 else { return nil }
            chromaFormat = format
        }
        sequenceParameterSet = sequence
        pictureParameterSet = picture
    }

    public init?(accessUnit: [UInt8]) {
        guard let sets = accessUnit.withUnsafeBytes({ H264ParameterSets(accessUnit: $0) }) else { return nil }
        self = sets
    }

    /// Every `profile_idc` of H.264 (§A.2, §G, §H).
    static let knownProfiles: Set<Int> = profilesWithChromaFormat.union([66, 77, 88])

    /// The profiles whose SPS says its chroma format (H.264 §7.3.2.1.1); the others are 4:2:0.
    static let profilesWithChromaFormat: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// `PPCCLL` of the codec string: profile, constraints and level in hexadecimal.
    public var profileLevelHex: String {
        [profile, constraints, level].map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined()
    }

    /// The `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §5.3.3.1) of MP4's `avcC` box, Matroska's
    /// `CodecPrivate` and WebCodecs' `description`: one SPS, one PPS, 4-byte NAL lengths.
    public var decoderConfigurationRecord: [UInt8] {
        var record: [UInt8] = [1, UInt8(profile), UInt8(constraints), UInt8(level), 0xFF, 0xE1]
        record += [UInt8(sequenceParameterSet.count >> 8), UInt8(sequenceParameterSet.count & 0xFF)] + sequenceParameterSet
        record += [1, UInt8(pictureParameterSet.count >> 8), UInt8(pictureParameterSet.count & 0xFF)] + pictureParameterSet
        if Self.profilesWithChromaFormat.contains(profile) {
            // chroma_format, bit depths (8) and no SPS extensions, each behind its reserved bits.
            record += [0xFC | UInt8(chromaFormat & 3), 0xF8, 0xF8, 0]
        }
        return record
    }

    /// A NAL unit's payload from its RBSP: a 03 after every 00 00 that a byte of 03 or less follows (§7.4.1), so
    /// that no start code appears within it.
    static func addingEmulationPrevention(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + rbsp.count / 64 + 1)
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// The RBSP of a NAL unit's payload: every 00 00 03 becomes 00 00.
    static func removingEmulationPrevention<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}

/// The NAL units of an Annex B byte stream, each without its start code (and without the zero bytes that may
/// trail it before the next start code).
public struct H264NALUnits: Sequence, IteratorProtocol {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = Self.startCodeEnd(in: bytes, from: 0) ?? bytes.count
    }

    public mutating func next() -> UnsafeRawBufferPointer.SubSequence? {
        guard offset < bytes.count else { return nil }
        let start = offset
        var end = bytes.count
        if let nextStart = Self.startCodeEnd(in: bytes, from: start) {
            end = nextStart - 3
            offset = nextStart
        } else {
            offset = bytes.count
        }
        while end > start, bytes[end - 1] == 0 { end -= 1 }
        return bytes[start..<end]
    }

    /// Where the first 00 00 01 at or after `from` ends.
    static func startCodeEnd(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        var index = from
        while index + 2 < bytes.count {
            if bytes[index + 2] > 1 {
                index += 3
            } else if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                return index + 3
            } else {
                index += 1
            }
        }
        return nil
    }
}
