import Testing

@testable import ScreenSession

/// The uplink controller's parts, each from made-up inputs.
@Suite struct WindowedExtremumTests {
    @Test func theMaximumOfTheWindowIsKept() {
        var lead = WindowedExtremum(.maximum, window: 10)
        #expect(lead.value == nil)
        #expect(lead.add(5, now: 0) == 5 && lead.add(3, now: 1) == 5 && lead.add(4, now: 2) == 5)
        #expect(lead.add(1, now: 10.5) == 4, "5 aged out; 4 is the largest left")
        #expect(lead.add(9, now: 11) == 9)
        lead.removeAll()
        #expect(lead.value == nil)
    }

    @Test func theMinimumOfTheWindowIsKept() {
        var roundTrip = WindowedExtremum(.minimum, window: 10)
        #expect(roundTrip.add(40, now: 0) == 40 && roundTrip.add(60, now: 1) == 40 && roundTrip.add(30, now: 2) == 30)
        #expect(roundTrip.add(50, now: 12.5) == 50, "both older ones aged out")
    }
}

@Suite struct BackoffThrottleTests {
    @Test func onceARoundAtMost() {
        var throttle = BackoffThrottle()
        #expect(throttle.backOff(now: 10) == true)
        #expect(throttle.backOff(now: 10.4) == false && abs(throttle.sinceBackoff(now: 10.4) - 0.4) < 1e-9)
        #expect(throttle.backOff(now: 10.5) == true && throttle.sinceBackoff(now: 11) == 0.5)
    }
}

@Suite struct UplinkDeliveryRateTests {
    @Test func framesCarriedGiveTheRateAndSmallOnesSayNothing() {
        var rate = UplinkDeliveryRate()
        rate.add(bytes: 1000, milliseconds: 8, ontoIdleLink: true)
        #expect(rate.kbps == nil, "a keepalive-sized frame")
        for _ in 0..<3 { rate.add(bytes: 25_000, milliseconds: 200, ontoIdleLink: false) }
        #expect(abs((rate.kbps ?? 0) - 1000) <= 1)
        rate.add(bytes: 25_000, milliseconds: .nan, ontoIdleLink: false)
        rate.add(bytes: 25_000, milliseconds: -.infinity, ontoIdleLink: false)
        #expect(abs((rate.kbps ?? 0) - 1000) <= 1, "not a time: not a sample")
    }

    @Test func aNarrowingShowsWithinAFewFrames() {
        var rate = UplinkDeliveryRate()
        for _ in 0..<20 { rate.add(bytes: 25_000, milliseconds: 200, ontoIdleLink: false) }
        for _ in 0..<3 { rate.add(bytes: 25_000, milliseconds: 400, ontoIdleLink: false) }
        #expect((rate.kbps ?? 0) < 600, "\(rate.kbps ?? 0) kbit/s three frames after the link halved")
    }

    @Test func anIdleLinksSlopeKeepsABurstFromPassingForRate() {
        // A 500 kbit/s link whose bucket lets 3 KB through at once and whose way takes 20 ms: each frame onto the
        // idle link takes 20 + (bytes − 3000) × 8 / 500 ms.
        var rate = UplinkDeliveryRate()
        for index in 0..<12 {
            let bytes = [8_000, 25_000, 15_000][index % 3]
            rate.add(bytes: bytes, milliseconds: 20 + Double(bytes - 3000) * 8 / 500, ontoIdleLink: true)
        }
        #expect(abs(Double(rate.kbps ?? 0) - 500) < 10, "\(rate.kbps ?? 0) kbit/s")
    }
}

@Suite struct UplinkTargetTests {
    let configuration = UplinkController.Configuration(maximumKbps: 1500)

    @Test func queuingBacksOffOnceARoundAndCalmClimbsUnderTheLink() {
        var target = UplinkTarget(configuration: configuration)
        #expect(target.afterAcknowledgement(queued: 400, deliveryKbps: 1000, now: 0) == true)
        #expect(target.kbps == 850 && target.reason == .backedOff(queuedMilliseconds: 400))
        _ = target.afterAcknowledgement(queued: 400, deliveryKbps: 1000, now: 0.2)
        #expect(target.kbps == 850, "the frames on their way were coded at the old rate")
        // Calm for 10 s after the hold: climbs 8 % a second, up to 90 % of the 1000 kbit/s delivered.
        for tenth in 0..<100 { _ = target.afterAcknowledgement(queued: 10, deliveryKbps: 1000, now: 1.2 + Double(tenth) / 10) }
        #expect(target.kbps == 900 && target.reason == .linkLimited)
        _ = target.afterAcknowledgement(queued: 100, deliveryKbps: 500, now: 12)
        #expect(target.kbps == 450, "never above what the link delivers")
    }

    @Test func reportsOfLossBackOffByHalfTheLossAndNoNumberIsTrusted() {
        var target = UplinkTarget(configuration: configuration)
        _ = target.afterReceiverReport(fractionLost: 0.2, queued: 0, sendingKbps: nil, now: 0)
        #expect(target.kbps == 1350 && target.reason == .lossy(percent: 20))
        for (index, hostile) in [Double.infinity, -.infinity, .nan, 7].enumerated() {
            _ = target.afterReceiverReport(fractionLost: hostile, queued: .infinity, sendingKbps: .nan, now: 1 + Double(index))
        }
        #expect(target.kbps >= configuration.minimumKbps && target.kbps <= configuration.maximumKbps)
    }

    @Test func silenceHalvesTheTargetDownToTheMinimum() {
        var target = UplinkTarget(configuration: configuration)
        for _ in 0..<10 { target.halveAfterSilence(.infinity) }
        #expect(target.kbps == configuration.minimumKbps && target.reason == .backedOff(queuedMilliseconds: 0))
    }
}
