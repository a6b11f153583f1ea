/// A point or span on a media timeline as an exact rational `value / timescale` seconds, like `CMTime`.
///
/// Arithmetic and comparison are exact (128-bit cross products); converting to another timescale
/// rounds to the nearest tick, which is the only place precision can be lost.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public static let zero = MediaTime(value: 0, timescale: 1)
    /// Nanosecond timescale used for capture timestamps.
    public static let nanosecondTimescale: Int32 = 1_000_000_000

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    public init(seconds: Double, timescale: Int32) {
        self.init(value: Int64((seconds * Double(timescale)).rounded()), timescale: timescale)
    }

    public var seconds: Double { Double(value) / Double(timescale) }

    /// The same instant in another timescale, rounded half away from zero.
    public func converted(to newTimescale: Int32) -> MediaTime {
        if newTimescale == timescale { return self }
        let scaled = Int128(value) * Int128(newTimescale)
        let divisor = Int128(timescale)
        let (quotient, remainder) = scaled.quotientAndRemainder(dividingBy: divisor)
        var rounded = quotient
        if remainder.magnitude * 2 >= divisor.magnitude { rounded += scaled < 0 ? -1 : 1 }
        return MediaTime(value: Int64(rounded), timescale: newTimescale)
    }

    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        if lhs.timescale == rhs.timescale { return MediaTime(value: lhs.value + rhs.value, timescale: lhs.timescale) }
        let common = commonTimescale(lhs.timescale, rhs.timescale)
        return MediaTime(
            value: lhs.converted(to: common).value + rhs.converted(to: common).value, timescale: common)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + MediaTime(value: -rhs.value, timescale: rhs.timescale)
    }

    public static func * (lhs: MediaTime, factor: Int64) -> MediaTime {
        MediaTime(value: lhs.value * factor, timescale: lhs.timescale)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        let divisor = greatestCommonDivisor(Int64(value.magnitude), Int64(timescale))
        hasher.combine(value / max(divisor, 1))
        hasher.combine(Int64(timescale) / max(divisor, 1))
    }

    public var description: String { "\(value)/\(timescale)" }

    /// The least common multiple of two timescales when it fits, else the larger one (rounding).
    private static func commonTimescale(_ a: Int32, _ b: Int32) -> Int32 {
        let lcm = Int64(a) / greatestCommonDivisor(Int64(a), Int64(b)) * Int64(b)
        return lcm <= Int64(Int32.max) ? Int32(lcm) : max(a, b)
    }
}

private func greatestCommonDivisor(_ a: Int64, _ b: Int64) -> Int64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}
