/// A point or span on a media timeline as an exact rational `value / timescale` seconds, like `CMTime`.
///
/// Arithmetic and comparison are exact (128-bit cross products); converting to another timescale
/// rounds to the nearest tick, which is the only place precision can be lost.
///
/// No operation traps, whatever the values: times come from peers (a frame's capture time is whatever its
/// publisher wrote), and a trap would end the whole relay. A result that does not fit in 64 bits saturates at
/// ``Int64/min`` or ``Int64/max`` (as FFmpeg's `av_rescale_rnd` returns a value instead of overflowing), and a
/// time made from seconds that are not finite is zero. Receivers bound what they accept where they parse it
/// (``maximumWireNanoseconds``), so saturation is a last line, not a way of working.
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

    /// The capture times a receiver accepts from the wire are within this many nanoseconds of zero (2^60 ns, 36
    /// years: monotonic clocks count from boot). Differences and sums of two such times fit in 64-bit nanoseconds.
    public static let maximumWireNanoseconds: Int64 = 1 << 60

    /// Whether the time is within ``maximumWireNanoseconds`` of zero.
    public var isWithinWireBounds: Bool {
        let nanoseconds = Int128(value) * Int128(Self.nanosecondTimescale) / Int128(timescale)
        return nanoseconds.magnitude <= UInt128(Self.maximumWireNanoseconds)
    }

    /// `seconds` rounded to the nearest tick; not finite is zero, beyond the 64-bit range saturates.
    public init(seconds: Double, timescale: Int32) {
        let ticks = (seconds * Double(timescale)).rounded()
        self.init(value: Int64(saturating: ticks), timescale: timescale)
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
        return MediaTime(value: Int64(clamping: rounded), timescale: newTimescale)
    }

    /// The sum, exact when it fits; else saturated.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negatingRight: false)
    }

    /// The difference, exact when it fits; else saturated.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negatingRight: true)
    }

    /// The time `factor` times over, saturated.
    public static func * (lhs: MediaTime, factor: Int64) -> MediaTime {
        MediaTime(value: Int64(clamping: Int128(lhs.value) * Int128(factor)), timescale: lhs.timescale)
    }

    /// `lhs ± rhs` in 128 bits on a common timescale, then saturated into 64.
    private static func combine(_ lhs: MediaTime, _ rhs: MediaTime, negatingRight: Bool) -> MediaTime {
        let timescale = lhs.timescale == rhs.timescale ? lhs.timescale : commonTimescale(lhs.timescale, rhs.timescale)
        func scaled(_ time: MediaTime) -> Int128 {
            if time.timescale == timescale { return Int128(time.value) }
            // Exact when `timescale` is a multiple of the time's own; else rounded, half away from zero.
            let product = Int128(time.value) * Int128(timescale)
            let (quotient, remainder) = product.quotientAndRemainder(dividingBy: Int128(time.timescale))
            return remainder.magnitude * 2 >= UInt128(time.timescale) ? quotient + (product < 0 ? -1 : 1) : quotient
        }
        let right = scaled(rhs)
        let sum = scaled(lhs) + (negatingRight ? -right : right)
        return MediaTime(value: Int64(clamping: sum), timescale: timescale)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        let divisor = greatestCommonDivisor(value.magnitude, UInt64(timescale))
        hasher.combine(value.magnitude / max(divisor, 1))
        hasher.combine(value < 0)
        hasher.combine(UInt64(timescale) / max(divisor, 1))
    }

    public var description: String { "\(value)/\(timescale)" }

    /// The least common multiple of two timescales when it fits, else the larger one (rounding).
    private static func commonTimescale(_ a: Int32, _ b: Int32) -> Int32 {
        let lcm = Int64(a) / greatestCommonDivisor(Int64(a), Int64(b)) * Int64(b)
        return lcm <= Int64(Int32.max) ? Int32(lcm) : max(a, b)
    }
}

extension Int64 {
    /// `value` truncated toward zero like `Int64(_:)`, which traps on what does not fit: here beyond the range
    /// saturates (infinities too) and NaN is zero. For any Double computed from what a peer sent.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value <= -0x1p63 {
            self = .min
        } else {
            self = Int64(value)
        }
    }
}

extension Int {
    /// ``Swift/Int64/init(saturating:)`` for `Int`.
    public init(saturating value: Double) { self = Int(Int64(saturating: value)) }
}

private func greatestCommonDivisor<Value: BinaryInteger>(_ a: Value, _ b: Value) -> Value {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}
