/// Writes big-endian bit fields, most significant bit first: the counterpart of ``BitReader``.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    /// Bits written so far.
    private(set) var count = 0

    /// The low `width` bits of `value` (at most 32).
    mutating func write(_ value: Int, bits width: Int) {
        precondition((0...32).contains(width), "a bit field is 0 to 32 bits")
        for shift in stride(from: width - 1, through: 0, by: -1) {
            if count & 7 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count & 7) }
            count += 1
        }
    }

    /// Copies the next `width` bits of `reader` (any number); false when it holds fewer.
    mutating func copy(_ width: Int, from reader: inout BitReader) -> Bool {
        var left = width
        while left > 0 {
            let chunk = min(left, 32)
            guard let value = reader.read(chunk) else { return false }
            write(value, bits: chunk)
            left -= chunk
        }
        return true
    }

    /// H.264's `rbsp_trailing_bits()` (§7.3.2.11): a one, then zeros to the byte boundary.
    mutating func writeTrailingBits() {
        write(1, bits: 1)
        while count & 7 != 0 { write(0, bits: 1) }
    }
}
