import Testing

@testable import ScreenSession

/// The publisher's own socket as a measure of its uplink: stretches written to it idle timed until drained, what
/// that tells the controller, and the pacing rate it is set to; from made-up samples.
@Suite struct SocketDrainTests {
    @Test func aStretchStartsOnlyOnAnIdleSocketTakesInWhatFollowsAndEndsWhenDrained() {
        var timer = SocketDrainTimer()
        timer.writing(bytes: 30_000, pendingBefore: 8_000, now: 0)
        #expect(!timer.isTiming, "written behind what the socket still held: not timed")
        #expect(timer.sampled(pending: 0, now: 0.1) == nil)
        timer.writing(bytes: 30_000, pendingBefore: nil, now: 0.2)
        #expect(!timer.isTiming, "a write that did not look (sound) starts nothing")
        timer.writing(bytes: 30_000, pendingBefore: 200, now: 1)
        timer.writing(bytes: 200, pendingBefore: nil, now: 1.0625)
        #expect(timer.sampled(pending: 30_200, now: 1.0625) == .draining(deliveredBytes: 0, seconds: 0.0625), "nothing acknowledged yet")
        #expect(timer.sampled(pending: 20_200, now: 1.125) == .draining(deliveredBytes: 0, seconds: 0), "the clock starts at the first acknowledgement")
        timer.writing(bytes: 10_000, pendingBefore: 20_000, now: 1.25)
        #expect(timer.sampled(pending: 10_200, now: 1.375) == .draining(deliveredBytes: 20_000, seconds: 0.25))
        #expect(timer.sampled(pending: 1_000, now: 1.5) == .drained(bytes: 20_000, seconds: 0.25), "about nothing held is drained: measured up to the last sample that saw bytes held")
        #expect(!timer.isTiming && timer.sampled(pending: 0, now: 1.4) == nil)
    }

    /// A 15 KB frame onto an idle 500 kbit/s link whose token bucket lets 3 KB through at once, sampled every 5 ms
    /// with the acknowledgements a round trip of 20 ms late: the measure is the link's rate, not the 625 kbit/s
    /// that timing from the write made of it.
    @Test func aTokenBucketsBurstAndTheRoundTripAreLeftOutOfTheMeasure() throws {
        var timer = SocketDrainTimer()
        let (bytes, burst, bytesPerSecond, roundTrip) = (15_000, 3_000, 62_500.0, 0.02)
        timer.writing(bytes: bytes, pendingBefore: 0, now: 0)
        var reading: SocketDrainTimer.Reading?
        for step in 1...200 where timer.isTiming {
            let now = Double(step) * 0.005
            let carried = now < roundTrip ? 0 : min(bytes, burst + Int((now - roundTrip) * bytesPerSecond))
            reading = timer.sampled(pending: bytes - carried, now: now)
        }
        guard case .drained(let carried, let seconds) = try #require(reading) else { Issue.record("\(String(describing: reading))"); return }
        let kbps = Double(carried) * 8 / seconds / 1000
        #expect(kbps > 490 && kbps < 510, "\(carried) bytes in \(seconds) s: \(kbps) kbit/s")
    }

    @Test func aSmallStretchThatDrainedBeforeAnySampleSawItAcknowledgedMeasuresNothingALargeOneAFastLink() {
        var timer = SocketDrainTimer()
        timer.writing(bytes: 3_500, pendingBefore: 0, now: 0)
        #expect(timer.sampled(pending: 0, now: 0.005) == nil, "a bucket's burst and a packet: no rate in it")
        #expect(!timer.isTiming)
        timer.writing(bytes: 30_000, pendingBefore: 0, now: 1.5)
        #expect(timer.sampled(pending: 0, now: 1.5078125) == .drained(bytes: 30_000, seconds: 0.0078125), "no thin link's bucket holds 30 KB")
    }

    @Test func hostileCountsNeitherTrapNorGoNegative() {
        var timer = SocketDrainTimer()
        timer.writing(bytes: .max, pendingBefore: 0, now: 0)
        timer.writing(bytes: .max, pendingBefore: nil, now: 0)
        timer.writing(bytes: -5, pendingBefore: nil, now: 0)
        #expect(timer.sampled(pending: .max, now: -1) == .draining(deliveredBytes: 0, seconds: 0))
        timer.reset()
        #expect(!timer.isTiming)
    }

    /// A controller that measured a link of 1000 kbit/s from the relay's acknowledgements.
    static func measuredAtAMegabit() -> UplinkController {
        var controller = UplinkController(configuration: .init(maximumKbps: 1500))
        for index in 0..<6 {
            let sent = Double(index)
            controller.sent(sequence: UInt64(index), bytes: 25_000, now: sent)
            controller.acknowledged(sequence: UInt64(index), receivedAt: sent * 1000 + 200, now: sent + 0.2)
        }
        return controller
    }

    @Test func aDrainedStretchMeasuresTheLinkAndANarrowedOneLowersTheTargetAtOnce() throws {
        var controller = Self.measuredAtAMegabit()
        let before = try #require(controller.deliveryKbps)
        #expect(before > 900 && before < 1100, "\(before)")
        let target = controller.targetKbps
        #expect(controller.socketDrained(bytes: 25_000, seconds: 0.2) == false, "the same link: nothing moves")
        #expect(controller.targetKbps == target)
        // The link fell to 400 kbit/s: 25 KB took half a second.
        #expect(controller.socketDrained(bytes: 25_000, seconds: 0.5) == true)
        #expect(controller.targetKbps < target && controller.targetKbps <= Int(Double(controller.deliveryKbps ?? 0) * 0.9))
        #expect(controller.socketDrained(bytes: 25_000, seconds: .nan) == false && controller.socketDrained(bytes: 25_000, seconds: 0) == false)
    }

    @Test func aStretchDrainingFarSlowerThanTheLinkCountsBeforeItIsThrough() {
        var controller = Self.measuredAtAMegabit()
        let target = controller.targetKbps
        #expect(controller.socketDraining(deliveredBytes: 1_000, seconds: 0.05) == false, "too early to say")
        #expect(controller.socketDraining(deliveredBytes: 12_000, seconds: 0.1) == false, "at the link's rate")
        #expect(controller.socketDraining(deliveredBytes: 5_000, seconds: 0.1) == true, "400 kbit/s so far")
        #expect(controller.targetKbps < target)
    }

    @Test func theSocketIsPacedAboveTheLinksMeasureNotTheTargetUnderIt() {
        var pacing = PublisherPacing(uplink: .init(maximumKbps: 1500))
        pacing.connected(acknowledges: true)
        for index in 0..<6 {
            pacing.sent(sequence: UInt64(index), bytes: 25_000, now: Double(index))
            _ = pacing.acknowledged(sequence: UInt64(index), receivedAt: Double(index) * 1000 + 200, now: Double(index) + 0.2)
        }
        let link = PublisherPacing.socketHeadroom * 1000 * 1000 / 8
        let rate = pacing.socketPacingDue()
        #expect(rate.map { $0 > 0.95 * link && $0 < 1.05 * link } == true, "at the link's measure, not the target's: \(String(describing: rate))")
    }

    @Test func theSocketIsPacedAtTheTargetWithHeadroomAgainOnlyWhenItMovedByATenth() {
        var pacing = PublisherPacing(uplink: .init(maximumKbps: 1000))
        pacing.connected(acknowledges: false)
        #expect(pacing.socketPacingDue() == nil, "a relay that does not acknowledge: unpaced")
        pacing.connected(acknowledges: true)
        #expect(pacing.socketPacingDue() == 1000 * 1000 / 8 * PublisherPacing.socketHeadroom)
        #expect(pacing.socketPacingDue() == nil, "unchanged")
        pacing.connectionChanged()
        pacing.connected(acknowledges: true)
        #expect(pacing.socketPacingDue() != nil, "a new socket is paced anew")
    }

    @Test func thePacingFollowsSamplesOfTheSocket() {
        var pacing = PublisherPacing(uplink: .init(maximumKbps: 1000))
        pacing.connected(acknowledges: true)
        _ = pacing.socketPacingDue()
        // Acknowledged frames measure 1 Mbit/s; then a page written to the idle socket drains at 300 kbit/s.
        for index in 0..<6 {
            pacing.sent(sequence: UInt64(index), bytes: 25_000, now: Double(index))
            _ = pacing.acknowledged(sequence: UInt64(index), receivedAt: Double(index) * 1000 + 200, now: Double(index) + 0.2)
        }
        pacing.writing(bytes: 30_000, pendingBefore: 0, now: 10)
        #expect(pacing.timesSocket)
        #expect(pacing.socketSampled(pending: 29_000, now: 10.005) == false, "the first acknowledgement starts the clock")
        #expect(pacing.socketSampled(pending: 25_000, now: 10.125) == true, "a narrowing seen under way")
        #expect(pacing.socketSampled(pending: 24_000, now: 10.1875) == false, "not again so soon")
        #expect(pacing.socketSampled(pending: 23_000, now: 10.25) == true, "still far slower a tenth of a second on")
        _ = pacing.socketSampled(pending: 0, now: 10.8)
        #expect(!pacing.timesSocket)
        let rate = pacing.socketPacingDue()
        #expect(rate.map { $0 < 1000 * 1000 / 8 } == true, "\(String(describing: rate))")
    }
}
