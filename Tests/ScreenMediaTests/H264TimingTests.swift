import ScreenMedia
import Testing

/// Timing added to H.264 sequence parameter sets, checked against SPSs that an independent writer made:
/// ffmpeg's `h264_metadata` filter (`tick_rate`, `fixed_frame_rate_flag=0`) for openh264's SPS and for a High
/// profile one that uses what openh264 never writes; a bit writer of the test's own for an SPS without VUI.
@Suite struct H264TimingTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }

    /// openh264's (screenpub's encoder) at 640×480: Constrained Baseline, a VUI with the video signal type only.
    static let openh264 = bytes("6742c0168c8d70501e935060606078442370")
    /// High profile: scaling lists (one the default, one of 64 entries), picture order count type 1, interlaced,
    /// cropped, and a VUI with an extended sample aspect ratio, overscan, colour, chroma location and bitstream
    /// restrictions: all that comes before the timing or after it.
    static let high = bytes("67640028ad8441447fffffffffffffff5191a394078044fcbff80020001fa808080f0f08845960")
    /// Baseline 320×240 without VUI.
    static let withoutVUI = bytes("6742c01eda0507e4")

    @Test func openh264sSPSGetsTheTimingFFmpegWrites() throws {
        let timing = H264Timing(unitsInTick: 63001, timeScale: 180_000)
        #expect(timing.sequenceParameterSet(Self.openh264) == Self.bytes("6742c0168c8d70501e93506060640003d864000afc803c2211b8"))
        let timed = try #require(timing.sequenceParameterSet(Self.openh264))
        #expect(H264Timing(sequenceParameterSet: timed) == timing)
        #expect(H264Timing(sequenceParameterSet: Self.openh264) == nil)
    }

    @Test func whatComesBeforeAndAfterTheTimingIsKeptBitForBit() throws {
        let timing = H264Timing(unitsInTick: 63001, timeScale: 180_000)
        let expected = Self.bytes("67640028ad8441447fffffffffffffff5191a394078044fcbff80020001fa808080f80007b0c80015f900784422cb0")
        #expect(timing.sequenceParameterSet(Self.high) == expected)
        #expect(H264Timing(sequenceParameterSet: expected) == timing)
    }

    /// Without VUI, one is added that holds the timing alone; the zero bytes of small values get emulation
    /// prevention bytes, and the profile and level read as before.
    @Test func anSPSWithoutVUIGetsOneWithTheTimingAlone() throws {
        let timing = H264Timing(unitsInTick: 1, timeScale: 2)
        let timed = try #require(timing.sequenceParameterSet(Self.withoutVUI))
        #expect(timed == Self.bytes("6742c01eda0507e84000000300400000030081"))
        #expect(H264Timing(sequenceParameterSet: timed) == timing)
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let sets = try #require(H264ParameterSets(accessUnit: [0, 0, 0, 1] + timed + [0, 0, 0, 1] + pps))
        #expect(sets.profileLevelHex == "42C01E" && sets.sequenceParameterSet == timed)
    }

    /// An SPS with timing of its own keeps it; what is not an SPS, or not one this can read, is left alone.
    @Test func timingOfItsOwnIsKeptAndWhatCannotBeReadIsNotChanged() throws {
        let timing = H264Timing(frameSeconds: 0.7)
        let timed = try #require(timing.sequenceParameterSet(Self.openh264))
        #expect(H264Timing(unitsInTick: 1, timeScale: 50).sequenceParameterSet(timed) == timed)
        #expect(timing.sequenceParameterSet([0x68, 0xCE, 0x3C, 0x80]) == nil)
        #expect(timing.sequenceParameterSet(Array(Self.openh264.prefix(6))) == nil)
        #expect(timing.sequenceParameterSet([UInt8]()) == nil)
        #expect(timing.sequenceParameterSet([0x67] + [UInt8](repeating: 0, count: 12)) == nil)
        #expect(timing.sequenceParameterSet([0x67] + [UInt8](repeating: 0xFF, count: 40)) == nil)
    }

    /// Random bytes after an SPS header of a known profile (so that reading goes deep) never trap; an SPS that got
    /// the timing reads it back.
    @Test func randomSPSsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let timing = H264Timing(frameSeconds: 0.7)
        for _ in 0..<3000 {
            let profile = [66, 77, 100, 244].randomElement(using: &generator) ?? 66
            let tail = (0..<Int.random(in: 0..<48, using: &generator)).map { _ in
                [0, 0, 3, 0xFF, 0x80, UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator) ?? 0
            }
            let unit = [0x67, UInt8(profile), 0, 30] + tail
            if let timed = timing.sequenceParameterSet(unit), timed != unit {
                #expect(H264Timing(sequenceParameterSet: timed) == timing, "\(unit)")
            }
        }
    }

    @Test func aFrameIsTwoTicksOfTheMP4Clock() {
        let timing = H264Timing(frameSeconds: 0.7)
        #expect(timing.unitsInTick == 63_000 && timing.timeScale == 180_000 && timing.frameSeconds == 0.7)
        #expect(H264Timing(frameSeconds: 0).unitsInTick == 1 && H264Timing(frameSeconds: .nan).unitsInTick == 1)
        #expect(H264Timing(frameSeconds: .infinity).unitsInTick == UInt32.max)
    }

    /// In an access unit only the SPS changes; a unit it cannot read goes across as it came.
    @Test func anAccessUnitGetsTheTimingInItsSPSAlone() throws {
        let timing = H264Timing(frameSeconds: 0.7)
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let slice: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x01, 0xFF]
        let timed = try #require(timing.sequenceParameterSet(Self.openh264))
        func prefixed(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { unit -> [UInt8] in [0, 0, 0, UInt8(unit.count)] + unit } }
        let annexB: [UInt8] = [Self.openh264, pps, slice].flatMap { unit -> [UInt8] in [0, 0, 0, 1] + unit }
        #expect(H264AccessUnit.lengthPrefixed(annexB: annexB, addingTiming: timing) == prefixed([timed, pps, slice]))
        #expect(H264AccessUnit.lengthPrefixed(annexB: annexB) == prefixed([Self.openh264, pps, slice]))
        let truncated = Array(Self.openh264.prefix(6))
        #expect(H264AccessUnit.lengthPrefixed(annexB: [0, 0, 1] + truncated + [0, 0, 1] + slice, addingTiming: timing) == prefixed([truncated, slice]))
    }
}
