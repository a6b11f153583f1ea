/// What an `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §5.3.3.1: MP4's `avcC`, Matroska's `CodecPrivate`
/// for `V_MPEG4/ISO/AVC`) tells a reader of the samples: the length size of their NAL units and the parameter
/// sets, which a keyframe sample need not repeat.
public struct H264DecoderConfiguration: Sendable, Hashable {
    /// Bytes of each NAL unit's length in the samples: 1, 2 or 4.
    public var lengthSize: Int
    /// Every SPS and PPS of the record, in Annex B (each after a 4-byte start code), ready to go before a keyframe.
    public var parameterSetsAnnexB: [UInt8]

    /// Reads `record`; nil when it is not one (another version, a length size of 3, a count or length that runs
    /// past its end, no SPS or no PPS).
    public init?(record: UnsafeRawBufferPointer) {
        guard record.count >= 7, record[0] == 1 else { return nil }
        let lengthSize = Int(record[4] & 0x03) + 1
        guard lengthSize != 3 else { return nil }
        self.lengthSize = lengthSize
        var offset = 5
        var annexB: [UInt8] = []
        // The SPS count (5 bits), the SPSs, then the PPS count (8 bits) and the PPSs, each after a 2-byte length.
        for countMask in [0x1F, 0xFF] as [UInt8] {
            guard offset < record.count else { return nil }
            let count = Int(record[offset] & countMask)
            offset += 1
            guard count > 0 else { return nil }
            for _ in 0..<count {
                guard record.count - offset >= 2 else { return nil }
                let length = Int(record[offset]) << 8 | Int(record[offset + 1])
                offset += 2
                guard length > 0, length <= record.count - offset else { return nil }
                annexB += [0, 0, 0, 1]
                annexB += record[offset..<offset + length]
                offset += length
            }
        }
        parameterSetsAnnexB = annexB
    }

    public init?(record: [UInt8]) {
        guard let configuration = record.withUnsafeBytes({ H264DecoderConfiguration(record: $0) }) else { return nil }
        self = configuration
    }

    /// A sample of a file whose samples hold NAL units after `lengthSize`-byte lengths, as the Annex B access unit
    /// the decoder takes; a keyframe without its own parameter sets gets the record's first. Nil when the sample is
    /// not in that layout.
    public func accessUnit(sample: UnsafeRawBufferPointer, isKeyframe: Bool) -> [UInt8]? {
        guard let unit = H264AccessUnit.annexB(lengthPrefixed: sample, lengthSize: lengthSize) else { return nil }
        guard isKeyframe, H264ParameterSets(accessUnit: unit) == nil else { return unit }
        return parameterSetsAnnexB + unit
    }

    public func accessUnit(sample: [UInt8], isKeyframe: Bool) -> [UInt8]? {
        sample.withUnsafeBytes { accessUnit(sample: $0, isKeyframe: isKeyframe) }
    }
}
