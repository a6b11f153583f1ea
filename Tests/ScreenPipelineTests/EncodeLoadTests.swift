@testable import ScreenPipeline
import Testing

/// The machine's load with made-up encode times.
struct EncodeLoadTests {
    /// Encodes taking `seconds` each at 5 fps for `duration` seconds from `start`, as the pipeline would ask.
    func run(_ load: inout EncodeLoad, taking seconds: Double, for duration: Double, from start: Double) -> (coded: Int, skipped: Int) {
        var coded = 0, skipped = 0
        var now = start
        while now < start + duration {
            now += load.interval
            if load.skipsNextFrame() {
                skipped += 1
            } else {
                coded += 1
                load.encoded(taking: seconds, now: now)
            }
        }
        return (coded, skipped)
    }

    @Test func aMachineThatKeepsUpCodesEveryFrame() {
        var load = EncodeLoad(interval: 0.2)
        let run = run(&load, taking: 0.05, for: 30, from: 0)
        #expect(load.stride == 1 && run.skipped == 0)
    }

    /// Encodes taking 250 ms at 5 fps (200 ms a frame): the stride doubles until they fit, then stays.
    @Test func anOverloadedMachineCodesFewerFramesAndRecoversWhenTheLoadPasses() {
        var load = EncodeLoad(interval: 0.2)
        _ = run(&load, taking: 0.25, for: 10, from: 0)
        #expect(load.stride == 2, "one frame in 2: 250 ms of 400")
        let steady = run(&load, taking: 0.25, for: 20, from: 10)
        #expect(load.stride == 2 && abs(steady.skipped - steady.coded) <= 1, "\(steady)")
        // Heavier: 500 ms per encode needs one in 4.
        _ = run(&load, taking: 0.5, for: 10, from: 30)
        #expect(load.stride == 4)
        // The load passes: back to every frame, one halving at a time.
        _ = run(&load, taking: 0.03, for: 30, from: 40)
        #expect(load.stride == 1)
    }

    @Test func theStrideHasACeiling() {
        var load = EncodeLoad(interval: 0.2)
        _ = run(&load, taking: 5, for: 120, from: 0)
        #expect(load.stride == EncodeLoad.maximumStride)
    }
}
