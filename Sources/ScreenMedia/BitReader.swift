/// Reads big-endian bit fields, most significant bit first.
struct BitReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func read(_ count: Int) -> Int? {
        guard count >= 0, count <= 32, position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0..<count {
            let bit = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
            value = value << 1 | Int(bit)
            position += 1
        }
        return value
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, position + count <= bytes.count * 8 else { return false }
        position += count
        return true
    }

    /// Skips a `uvlc()` value: leading zeros, a one, as many bits as there were zeros.
    mutating func skipUVLC() -> Bool {
        guard let zeros = readLeadingZeros() else { return false }
        return skip(zeros)
    }

    /// Reads an unsigned Exp-Golomb value (H.264's `ue(v)`): leading zeros, a one, as many bits as there were zeros.
    mutating func readExpGolomb() -> Int? {
        guard let zeros = readLeadingZeros(), let suffix = read(zeros) else { return nil }
        return (1 << zeros) - 1 + suffix
    }

    /// Reads a signed Exp-Golomb value (H.264's `se(v)`): 1, −1, 2, −2, … for the codes after 0.
    mutating func readSignedExpGolomb() -> Int? {
        guard let code = readExpGolomb() else { return nil }
        return code & 1 == 1 ? (code + 1) / 2 : -(code / 2)
    }

    /// The zeros before the next one bit (fewer than 32: more is no value of these codes), that bit read too.
    private mutating func readLeadingZeros() -> Int? {
        var zeros = 0
        while true {
            guard let bit = read(1) else { return nil }
            if bit == 1 { return zeros }
            zeros += 1
            guard zeros < 32 else { return nil }
        }
    }
}
