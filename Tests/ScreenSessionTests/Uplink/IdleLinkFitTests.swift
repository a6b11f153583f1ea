import ScreenTesting
import Testing

@testable import ScreenSession

/// The line through frames' times on an idle link against their sizes, from made-up frames and times.
@Suite struct IdleLinkFitTests {
    /// A link of `kbps` with a fixed `delay` (ms) on top: a frame of `bytes` takes `delay + bytes * 8 / kbps` ms.
    static func fit(_ sizes: [Int], kbps: Double, delay: Double = 20, into fit: IdleLinkFit = IdleLinkFit()) -> IdleLinkFit {
        var fit = fit
        for bytes in sizes { fit.add(bytes: bytes, milliseconds: delay + Double(bytes) * 8 / kbps) }
        return fit
    }

    static let pages = [3_000, 8_000, 13_000, 18_000, 23_000]

    static func isClose(_ value: Double?, to expected: Double, within share: Double = 1e-9) -> Bool {
        value.map { abs($0 - expected) <= share * expected } ?? false
    }

    @Test func theSlopeIsTheRateOnceFiveFramesHaveWeighed() {
        // Each earlier frame weighs 0.9 of the next: four weigh 3.44, under the 4 it takes; five weigh 4.10.
        #expect(Self.fit(Array(Self.pages.prefix(4)), kbps: 8_000).kbps == nil)
        let rate = Self.fit(Self.pages, kbps: 8_000).kbps
        #expect(Self.isClose(rate, to: 8_000), "\(String(describing: rate))")
    }

    @Test func theWaysDelayAndABurstsHeadStartDoNotChangeTheRate() {
        #expect(Self.isClose(Self.fit(Self.pages, kbps: 2_000, delay: 0).kbps, to: 2_000))
        #expect(Self.isClose(Self.fit(Self.pages, kbps: 2_000, delay: 400).kbps, to: 2_000), "a long way")
        #expect(Self.isClose(Self.fit(Self.pages, kbps: 2_000, delay: -10).kbps, to: 2_000), "a bucket's burst lowers the line")
    }

    @Test func sizesTooCloseTogetherSayNothing() {
        let same = Array(repeating: 10_000, count: 20)
        #expect(Self.fit(same, kbps: 8_000).kbps == nil, "one size: no slope")
        // A spread of a tenth of the mean is what it takes.
        let narrow = (0..<20).map { $0.isMultiple(of: 2) ? 9_200 : 10_800 }
        #expect(Self.fit(narrow, kbps: 8_000).kbps == nil, "8 %")
        let wide = (0..<20).map { $0.isMultiple(of: 2) ? 8_800 : 11_200 }
        #expect(Self.isClose(Self.fit(wide, kbps: 8_000).kbps, to: 8_000, within: 1e-6), "12 %")
    }

    @Test func aLineThatDoesNotRiseWithSizeIsNoRate() {
        var flat = IdleLinkFit()
        for bytes in Self.pages { flat.add(bytes: bytes, milliseconds: 50) }
        #expect(flat.kbps == nil, "the same time whatever the size")
        var falling = IdleLinkFit()
        for bytes in Self.pages { falling.add(bytes: bytes, milliseconds: 100 - Double(bytes) / 1_000) }
        #expect(falling.kbps == nil)
    }

    @Test func theLineFollowsALinkThatNarrowed() {
        let before = Self.fit(Array(repeating: Self.pages, count: 6).flatMap { $0 }, kbps: 8_000)
        let after = Self.fit(Array(repeating: Self.pages, count: 8).flatMap { $0 }, kbps: 2_000, into: before)
        // 40 frames later the first 30 weigh under 2 % of the whole.
        #expect(Self.isClose(after.kbps, to: 2_000, within: 0.05), "\(String(describing: after.kbps))")
    }

    @Test func extremeSizesAndTimesGiveARateOrNoneNeverNonsense() {
        var generator = SeededRandomNumberGenerator()
        for _ in 0..<200 {
            var fit = IdleLinkFit()
            var samples: [(Int, Double)] = []
            for _ in 0..<8 {
                let sample = (Int.random(in: 0...Int.max, using: &generator), Double.random(in: 0...1e12, using: &generator))
                samples.append(sample)
                fit.add(bytes: sample.0, milliseconds: sample.1)
                if let kbps = fit.kbps { #expect(kbps.isFinite && kbps > 0, "\(samples) (\(generator))") }
            }
        }
    }
}
