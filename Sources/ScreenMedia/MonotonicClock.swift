#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic ticks with a `numer/denom` timebase, the shape of `mach_absolute_time()` and
/// `mach_timebase_info` that the capture timestamps of the seeds use: nanoseconds = ticks × numer / denom.
///
/// On Linux the ticks come from `CLOCK_MONOTONIC` in nanoseconds (timebase 1/1). Timestamps are always
/// computed from an absolute tick count, never accumulated from intervals, so they cannot drift.
public struct MonotonicClock: Sendable {
    public struct Timebase: Sendable, Hashable {
        public var numer: UInt32
        public var denom: UInt32
        public init(numer: UInt32, denom: UInt32) {
            precondition(numer > 0 && denom > 0, "timebase terms must be positive")
            self.numer = numer
            self.denom = denom
        }
    }

    public let timebase: Timebase

    public init() { self.timebase = Timebase(numer: 1, denom: 1) }

    /// A clock reading ticks with another timebase (for tests and for timestamps from other clocks).
    public init(timebase: Timebase) { self.timebase = timebase }

    /// The current tick count of `CLOCK_MONOTONIC`, expressed in this clock's timebase.
    public func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        let nanoseconds = UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
        return ticks(fromNanoseconds: nanoseconds)
    }

    public func nanoseconds(fromTicks ticks: UInt64) -> UInt64 {
        UInt64(UInt128(ticks) * UInt128(timebase.numer) / UInt128(timebase.denom))
    }

    public func ticks(fromNanoseconds nanoseconds: UInt64) -> UInt64 {
        UInt64(UInt128(nanoseconds) * UInt128(timebase.denom) / UInt128(timebase.numer))
    }

    /// A tick count as an exact `MediaTime` in nanoseconds (as `CMTimeMake(ticks × numer / denom, 1e9)`).
    public func mediaTime(fromTicks ticks: UInt64) -> MediaTime {
        MediaTime(value: Int64(nanoseconds(fromTicks: ticks)), timescale: MediaTime.nanosecondTimescale)
    }
}

