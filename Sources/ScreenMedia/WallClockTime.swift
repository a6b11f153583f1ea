#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock time (`CLOCK_REALTIME`), carried beside the monotonic capture time so that subscribers
/// can measure capture-to-display latency across machines.
public struct WallClockTime: Sendable, Hashable, Comparable {
    public var secondsSince1970: Int64
    public var nanoseconds: Int32

    public init(secondsSince1970: Int64, nanoseconds: Int32) {
        self.secondsSince1970 = secondsSince1970
        self.nanoseconds = nanoseconds
    }

    public static func now() -> WallClockTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallClockTime(secondsSince1970: Int64(spec.tv_sec), nanoseconds: Int32(spec.tv_nsec))
    }

    public var millisecondsSince1970: Int64 { secondsSince1970 * 1000 + Int64(nanoseconds / 1_000_000) }

    public init(millisecondsSince1970 ms: Int64) {
        let (seconds, rest) = ms.quotientAndRemainder(dividingBy: 1000)
        self.init(secondsSince1970: seconds, nanoseconds: Int32(rest) * 1_000_000)
    }

    /// ISO-8601 UTC with milliseconds, e.g. `2026-11-22T05:10:22.123Z` (as ``FrameMetadata/iso8601(_:)`` writes it).
    public var iso8601: String { String(decoding: FrameMetadata.iso8601(self).bytes, as: UTF8.self) }

    public static func < (lhs: WallClockTime, rhs: WallClockTime) -> Bool {
        (lhs.secondsSince1970, lhs.nanoseconds) < (rhs.secondsSince1970, rhs.nanoseconds)
    }
}
