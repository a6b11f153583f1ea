/// The two layouts of an H.264 access unit: Annex B (each NAL unit after a 00 00 01 start code: what openh264
/// writes, what the wire carries and what openh264 decodes) and length-prefixed (each NAL unit after its length,
/// big-endian: what the samples of MP4 and Matroska hold, in the length size their `avcC` declares).
public enum H264AccessUnit {
    /// Bytes of each NAL unit's length in the samples screenpub writes (the `avcC` record says 4).
    public static let lengthSize = 4

    /// `annexB` with every start code replaced by the 4-byte length of the NAL unit after it. Every NAL unit is
    /// kept, parameter sets and SEI included; what is not part of one goes (bytes before the first start code,
    /// the zero bytes that may trail a unit, empty units). With `timing`, a sequence parameter set without timing
    /// gets it (``H264Timing/sequenceParameterSet(_:)``). Nil when a unit is longer than 4 bytes can count.
    public static func lengthPrefixed(annexB: UnsafeRawBufferPointer, addingTiming timing: H264Timing? = nil) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(annexB.count + 16)
        func append<Unit: Collection<UInt8>>(_ unit: Unit) -> Bool {
            guard let length = UInt32(exactly: unit.count) else { return false }
            out += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            out += unit
            return true
        }
        for unit in H264NALUnits(annexB) where !unit.isEmpty {
            let isSequenceParameterSet = unit.first.map { $0 & 0x1F == H264ParameterSets.sequenceParameterSetType } ?? false
            if let timing, isSequenceParameterSet, let timed = timing.sequenceParameterSet(unit) {
                guard append(timed) else { return nil }
            } else {
                guard append(unit) else { return nil }
            }
        }
        return out
    }

    /// `lengthPrefixed` (NAL units each after its `lengthSize`-byte length: 1, 2 or 4) as Annex B, each unit after
    /// a 4-byte start code. Nil when the bytes are not that layout: a length that runs past the end, an empty
    /// unit, a length size MP4 does not allow, or bytes left over that cannot hold a length.
    public static func annexB(lengthPrefixed: UnsafeRawBufferPointer, lengthSize: Int) -> [UInt8]? {
        guard [1, 2, 4].contains(lengthSize) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(lengthPrefixed.count + 16)
        var offset = 0
        while offset < lengthPrefixed.count {
            // Lengths are read as at most 4 bytes into an Int and compared with what is left: nothing can overflow.
            guard lengthPrefixed.count - offset >= lengthSize else { return nil }
            var length = 0
            for byte in lengthPrefixed[offset..<offset + lengthSize] { length = length << 8 | Int(byte) }
            offset += lengthSize
            guard length > 0, length <= lengthPrefixed.count - offset else { return nil }
            out += [0, 0, 0, 1]
            out += lengthPrefixed[offset..<offset + length]
            offset += length
        }
        return out
    }

    public static func lengthPrefixed(annexB: [UInt8], addingTiming timing: H264Timing? = nil) -> [UInt8]? {
        annexB.withUnsafeBytes { lengthPrefixed(annexB: $0, addingTiming: timing) }
    }

    public static func annexB(lengthPrefixed: [UInt8], lengthSize: Int) -> [UInt8]? {
        lengthPrefixed.withUnsafeBytes { annexB(lengthPrefixed: $0, lengthSize: lengthSize) }
    }
}
