import ScreenMedia
import Testing

@Suite struct MediaTimeTests {
    @Test func additionAcrossTimescalesIsExact() {
        let third = MediaTime(value: 1, timescale: 3)
        let half = MediaTime(value: 1, timescale: 2)
        let sum = third + half
        #expect(sum == MediaTime(value: 5, timescale: 6))
        #expect(sum.timescale == 6)
        #expect(sum - half == third)
    }

    @Test func equalityAndOrderIgnoreTimescale() {
        #expect(MediaTime(value: 500, timescale: 1000) == MediaTime(value: 1, timescale: 2))
        #expect(MediaTime(value: 499, timescale: 1000) < MediaTime(value: 1, timescale: 2))
        let set: Set = [MediaTime(value: 2, timescale: 4), MediaTime(value: 1, timescale: 2)]
        #expect(set.count == 1)
    }

    @Test func conversionRoundsToNearest() {
        #expect(MediaTime(value: 1, timescale: 3).converted(to: 1000).value == 333)
        #expect(MediaTime(value: 2, timescale: 3).converted(to: 1000).value == 667)
        #expect(MediaTime(value: -2, timescale: 3).converted(to: 1000).value == -667)
        #expect(MediaTime(value: 1_500_000, timescale: 1_000_000_000).converted(to: 1000).value == 2)
    }

    @Test func thirtyThousandFramesAtThirtyFpsDoNotDrift() {
        // Adding 1/30 s thirty thousand times must land exactly on 1000 s, unlike floating point.
        let frame = MediaTime(value: 1, timescale: 30)
        var time = MediaTime.zero
        var floating = 0.0
        for _ in 0..<30_000 {
            time = time + frame
            floating += 1.0 / 30.0
        }
        #expect(time == MediaTime(value: 1000, timescale: 1))
        #expect(floating != 1000)  // the drift exact arithmetic avoids
        #expect((frame * 30_000).converted(to: 1) == MediaTime(value: 1000, timescale: 1))
    }

    @Test func largeValuesDoNotOverflowWhenCompared() {
        let a = MediaTime(value: Int64.max / 2, timescale: 1_000_000_000)
        let b = MediaTime(value: Int64.max / 2 + 1, timescale: 1_000_000_000)
        #expect(a < b)
        #expect(a.converted(to: 1_000_000_000) == a)
    }
}

@Suite struct MonotonicClockTests {
    @Test func nanosecondTimebaseIsIdentity() {
        let clock = MonotonicClock()
        #expect(clock.timebase == MonotonicClock.Timebase(numer: 1, denom: 1))
        #expect(clock.nanoseconds(fromTicks: 123_456_789) == 123_456_789)
    }

    @Test func timebaseConversionMatchesMachStyleArithmetic() {
        // An ARM-like mach timebase: 125/3 ns per tick (24 MHz counter).
        let clock = MonotonicClock(timebase: .init(numer: 125, denom: 3))
        #expect(clock.nanoseconds(fromTicks: 24_000_000) == 1_000_000_000)
        #expect(clock.ticks(fromNanoseconds: 1_000_000_000) == 24_000_000)
        #expect(clock.mediaTime(fromTicks: 24_000_000) == MediaTime(value: 1, timescale: 1))
    }

    @Test func ticksAdvanceMonotonically() {
        let clock = MonotonicClock()
        var previous = clock.now()
        for _ in 0..<1000 {
            let now = clock.now()
            #expect(now >= previous)
            previous = now
        }
    }

    @Test func timestampsFromAbsoluteTicksDoNotDrift() {
        // Frame k of a 30 fps capture is stamped from its own tick count: even frame 1 000 000 (9.3 hours in)
        // is within the 1 ns resolution of its exact time, where summed intervals would have drifted.
        let clock = MonotonicClock(timebase: .init(numer: 125, denom: 3))
        let ticksPerFrame: UInt64 = 800_000  // 1/30 s at 24 MHz
        for frame in [1, 1000, 1_000_000] as [Int64] {
            let time = clock.mediaTime(fromTicks: ticksPerFrame * UInt64(frame))
            let exact = MediaTime(value: frame, timescale: 30)
            #expect(abs((time - exact).converted(to: 1_000_000_000).value) <= 1)
        }
    }

    /// Times are a peer's word: no value, however extreme, may trap (a trap ends the whole relay).
    @Test func extremeTimesSaturateInsteadOfTrapping() {
        let huge = MediaTime(value: .max, timescale: 1)
        #expect(huge.converted(to: 1_000_000_000).value == .max)
        #expect(MediaTime(value: .min, timescale: 1).converted(to: 1000).value == .min)
        #expect((huge + huge).value == .max)
        #expect((MediaTime(value: .min, timescale: 1) - huge).value == .min)
        #expect((huge - MediaTime(value: 1, timescale: 3)).value == .max)
        #expect((huge * 3).value == .max)
        #expect((huge * -3).value == .min)
        #expect(MediaTime(seconds: .infinity, timescale: 1000).value == .max)
        #expect(MediaTime(seconds: -.infinity, timescale: 1000).value == .min)
        #expect(MediaTime(seconds: .nan, timescale: 1000).value == 0)
        // Hashing the most negative value does not trap either.
        #expect(Set([MediaTime(value: .min, timescale: 7), MediaTime(value: .min, timescale: 7)]).count == 1)
        #expect(Int64(saturating: 1e300) == .max && Int64(saturating: -1e300) == .min && Int64(saturating: .nan) == 0)
        #expect(Int64(saturating: 0x1p63) == .max && Int64(saturating: -0x1p63) == .min && Int64(saturating: 12.9) == 12)
    }

    @Test func wireBoundsAreWithin2To60Nanoseconds() {
        #expect(MediaTime(value: 1 << 60, timescale: 1_000_000_000).isWithinWireBounds)
        #expect(!MediaTime(value: (1 << 60) + 1, timescale: 1_000_000_000).isWithinWireBounds)
        #expect(!MediaTime(value: .max, timescale: 1).isWithinWireBounds)
        #expect(!MediaTime(value: .min, timescale: 1).isWithinWireBounds)
        #expect(MediaTime(value: -(1 << 30), timescale: 1).isWithinWireBounds)
        // Two such times differ by what 64-bit nanoseconds hold.
        let a = MediaTime(value: 1 << 60, timescale: 1_000_000_000)
        let b = MediaTime(value: -(1 << 60), timescale: 1_000_000_000)
        #expect((a - b).value == 1 << 61)
    }
}
