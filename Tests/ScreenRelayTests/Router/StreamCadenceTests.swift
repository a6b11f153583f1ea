import Testing

@testable import ScreenRelay

/// A stream's pace from made-up frame arrivals.
@Suite struct StreamCadenceTests {
    @Test func layerRatesFollowTheBytesOfEachLayer() {
        var cadence = StreamCadence()
        // 10 s of 5 fps: layer 0 every 4th frame of 4000 bytes, layer 1 the others of 1000.
        for index in 0..<50 { cadence.count(index % 4 == 0 ? 4000 : 1000, layer: index % 4 == 0 ? 0 : 1, now: Double(index) * 0.2) }
        #expect(cadence.topLayer == 1)
        let layerZero = cadence.rate(upTo: 0), both = cadence.rate(upTo: 1)
        // Over 10 s: 13 × 4000 and 37 × 1000 bytes; the decaying sum weights the last 5 s most.
        #expect(layerZero > 3000 && layerZero < 6000 && both > layerZero && both < 9000, "\(layerZero) \(both)")
        #expect(cadence.rate(upTo: -3) == cadence.rate(upTo: 0))
    }

    @Test func theNextLayerZeroFrameIsDueAnIntervalAfterTheLastOrWithTheNextFrame() {
        var cadence = StreamCadence()
        #expect(cadence.layerZeroDue(after: 0) == nil)
        for index in 0..<8 { cadence.count(100, layer: index % 4 == 0 ? 0 : 1, now: Double(index) * 0.5) }
        // Layer 0 at 0 and 2 s, frames every 0.5 s; the last frame at 3.5 s.
        #expect(cadence.layerZeroDue(after: 3.6) == 4)
        #expect(cadence.layerZeroDue(after: 4.1) == 4.1, "overdue: with the next frame, now that it is due")
        #expect(cadence.layerZeroDue(after: 10) == 10.5, "paused: a frame interval from now")
    }
}
