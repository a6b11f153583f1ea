import ScreenSession
import Testing

/// The uplink controller with made-up times: a simulated link in front of the relay, no sockets.
struct UplinkControllerTests {
    /// A link that carries `kbps` (bits per ms), one frame after another, with `propagation` ms of empty-link
    /// delay, and a relay clock `offset` ms away from the publisher's. With a `burst`, it is a token bucket (as
    /// `tbf` and many providers' shapers are): up to that many bytes saved up while it was idle go at once.
    struct SimulatedUplink {
        var kbps: Double
        var propagation = 5.0
        var offset = 1_000_000.0
        var burst = 0.0
        /// When the link is free again, publisher clock (ms).
        var busyUntil = 0.0

        /// The relay clock time at which a frame of `bytes` sent at `sentAt` (ms) is whole at the relay.
        mutating func arrival(bytes: Int, sentAt: Double) -> Double {
            let start = max(sentAt, busyUntil)
            let saved = min(burst, (start - busyUntil) * kbps / 8)
            busyUntil = start + max(0, Double(bytes) - saved) * 8 / kbps
            return busyUntil + propagation + offset
        }
    }

    /// A publisher in front of `link`: a frame every `interval` ms, held back as the controller says (a held frame
    /// is skipped, as the capture side would); acknowledgements come back after the link's propagation delay.
    struct Harness {
        var controller: UplinkController
        var link: SimulatedUplink
        var interval = 200.0
        var now = 0.0
        var sequence: UInt64 = 0
        var pendingAcks: [(at: Double, sequence: UInt64, receivedAt: Double)] = []

        /// Runs for `duration` ms with frames the scene would make `bytes` large (the encoder makes them at most
        /// the target's share). Returns the frames sent, held, and the longest a frame took to arrive (ms).
        mutating func run(duration: Double, bytes: Int) -> (sent: Int, held: Int, worstDelay: Double) {
            var (sent, held, worst) = (0, 0, 0.0)
            let end = now + duration
            while now < end {
                while let first = pendingAcks.first, first.at <= now {
                    pendingAcks.removeFirst()
                    controller.acknowledged(sequence: first.sequence, receivedAt: first.receivedAt, now: first.at / 1000)
                }
                if now / 1000 >= controller.framesWaitUntil(queuedBytes: 0) {
                    let size = min(bytes, Int(Double(controller.targetKbps) * interval / 8))
                    controller.sent(sequence: sequence, bytes: size, now: now / 1000)
                    let arrival = link.arrival(bytes: size, sentAt: now)
                    worst = max(worst, arrival - link.offset - now)
                    pendingAcks.append((arrival - link.offset + link.propagation, sequence, arrival))
                    sent += 1
                } else {
                    held += 1
                }
                sequence += 1
                now += interval
            }
            return (sent, held, worst)
        }

        /// Lets every frame on its way arrive and be acknowledged.
        mutating func drain() {
            now = max(now, pendingAcks.last?.at ?? now)
            for ack in pendingAcks { controller.acknowledged(sequence: ack.sequence, receivedAt: ack.receivedAt, now: ack.at / 1000) }
            pendingAcks.removeAll()
        }
    }

    @Test func withoutAcknowledgementsItKeepsTheConfiguredRate() {
        let controller = UplinkController(configuration: .init(maximumKbps: 1500))
        #expect(controller.targetKbps == 1500)
        #expect(controller.reason == .configured)
        #expect(controller.deliveryKbps == nil)
        #expect(0 >= controller.framesWaitUntil(queuedBytes: 1 << 20), "nothing is held back before the link is measured")
    }

    /// 1500 kbit/s configured on a 1000 kbit/s link, pages of up to 60 KB: the target settles under the link,
    /// frames stop queuing behind each other, and the link stays well used.
    @Test func anUplinkBelowTheConfiguredRateIsFollowed() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1500)), link: SimulatedUplink(kbps: 1000))
        _ = publisher.run(duration: 20_000, bytes: 60_000)
        #expect(publisher.controller.targetKbps < 1000 && publisher.controller.targetKbps >= 800, "target \(publisher.controller.targetKbps)")
        let estimate = publisher.controller.deliveryKbps ?? 0
        #expect(estimate >= 900 && estimate <= 1100, "the link's rate was measured: \(estimate)")
        let settled = publisher.run(duration: 20_000, bytes: 60_000)
        #expect(settled.worstDelay < 600, "no frame waits behind others once settled: \(settled.worstDelay) ms")
        let carried = Double(settled.sent) * Double(publisher.controller.targetKbps) * 0.2 / 20
        #expect(carried >= 800, "the link stays used: \(carried) kbit/s")
    }

    /// The link drops from 2000 to 500 kbit/s and comes back: the target follows it down at once and climbs
    /// back gently, never above the configured rate.
    /// A 500 kbit/s token bucket with a 3 KB burst, pages of 25 KB and small changes of 6 KB in turn, each sent onto
    /// an idle link: by their own times the link would seem to carry 620 kbit/s (the burst takes a bite of every
    /// frame), and the target would sit above the link; the slope of time against size says 500.
    @Test func aTokenBucketsBurstDoesNotInflateTheMeasure() {
        var publisher = Harness(
            controller: UplinkController(configuration: .init(maximumKbps: 1500)), link: SimulatedUplink(kbps: 500, burst: 3000), interval: 500)
        for page in 0..<80 { _ = publisher.run(duration: 500, bytes: page % 2 == 0 ? 25_000 : 6_000) }
        let delivery = publisher.controller.deliveryKbps ?? 0
        #expect(delivery >= 450 && delivery <= 510, "measured \(delivery) kbit/s on a 500 kbit/s link")
        #expect(publisher.controller.targetKbps <= 500, "target \(publisher.controller.targetKbps)")
    }

    @Test func aLinkThatDropsAndRecoversIsFollowedBothWays() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1500)), link: SimulatedUplink(kbps: 2000))
        _ = publisher.run(duration: 15_000, bytes: 40_000)
        #expect(publisher.controller.targetKbps == 1500 && publisher.controller.reason == .atMaximum)
        publisher.link.kbps = 500
        _ = publisher.run(duration: 5_000, bytes: 40_000)
        #expect(publisher.controller.targetKbps <= 550, "backed off to about the link within 5 s: \(publisher.controller.targetKbps)")
        let low = publisher.run(duration: 10_000, bytes: 40_000)
        #expect(low.worstDelay < 600, "frames fit the thin link: \(low.worstDelay) ms")
        publisher.link.kbps = 2000
        var climb: [Int] = []
        for _ in 0..<40 {
            _ = publisher.run(duration: 1000, bytes: 40_000)
            climb.append(publisher.controller.targetKbps)
        }
        #expect(climb.last == 1500, "back at the configured rate: \(climb)")
        // Gently: never more than about 8 % a second (plus the per-update step).
        for (before, after) in zip(climb, climb.dropFirst()) { #expect(Double(after) <= Double(before) * 1.1 + 2, "\(climb)") }
    }

    /// While the link is still busy with what is in flight for more than half the target delay, the next frame
    /// waits; once the link has nearly carried it, frames go again, before its acknowledgement is back.
    @Test func framesWaitWhileTheLinkIsBusy() {
        var publisher = Harness(
            controller: UplinkController(configuration: .init(maximumKbps: 1000, targetDelayMilliseconds: 150)), link: SimulatedUplink(kbps: 800))
        _ = publisher.run(duration: 10_000, bytes: 50_000)
        publisher.drain()
        var controller = publisher.controller
        let rate = Double(controller.deliveryKbps ?? 0)
        #expect(rate >= 700 && rate <= 900, "the link's rate was measured: \(rate)")
        // 10 KB keeps the link busy for 10_000 × 8 / rate ≈ 100 ms: it waits until 75 ms (half the delay) are left.
        controller.sent(sequence: 100_000, bytes: 10_000, now: 20)
        let carried = 10_000 * 8 / rate / 1000
        #expect(20 < controller.framesWaitUntil(queuedBytes: 0))
        #expect(abs(controller.framesWaitUntil(queuedBytes: 0) - (20 + carried - 0.075)) < 0.001)
        #expect(20 + carried - 0.074 >= controller.framesWaitUntil(queuedBytes: 0), "no acknowledgement needed")
        #expect(20 + carried - 0.074 < controller.framesWaitUntil(queuedBytes: 20_000), "a frame still queued to be sent counts")
        #expect(controller.framesWaitUntil(queuedBytes: 100_000) == 20 + 10, "more queued than the allowance: until the queue moves, or what is in flight is taken as lost")
        controller.acknowledged(sequence: 100_000, receivedAt: 20_000 + publisher.link.offset + 100, now: 20.11)
        #expect(20.11 >= controller.framesWaitUntil(queuedBytes: 0))
    }

    /// A page that takes most of the time between pages to carry: the next one goes while the last is finishing
    /// (the link stays used), not after its acknowledgement has come back.
    @Test func theNextPageGoesWhileTheLastIsFinishing() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1500)), link: SimulatedUplink(kbps: 1000))
        _ = publisher.run(duration: 10_000, bytes: 60_000)
        publisher.drain()
        var controller = publisher.controller
        let rate = Double(controller.deliveryKbps ?? 0)
        controller.sent(sequence: 200_000, bytes: 60_000, now: 30)
        let carried = 60_000 * 8 / rate / 1000
        #expect(carried > 0.4 && carried < 0.55, "\(carried) s")
        #expect(30 + carried - 0.1 < controller.framesWaitUntil(queuedBytes: 0))
        #expect(30 + carried - 0.07 >= controller.framesWaitUntil(queuedBytes: 0))
        // With a second frame on its way too, the third waits for an acknowledgement: had the link narrowed
        // since it was measured, only one frame would queue behind another.
        controller.sent(sequence: 200_001, bytes: 60_000, now: 30 + carried - 0.07)
        #expect(controller.framesWaitUntil(queuedBytes: 0) == 30 + carried - 0.07 + 10, "until the link has been silent for 10 s")
        controller.acknowledged(sequence: 200_000, receivedAt: 30_000 + carried * 1000 + publisher.link.offset + 5, now: 30 + carried + 0.01)
        #expect(30 + 2 * carried - 0.07 >= controller.framesWaitUntil(queuedBytes: 0))
    }

    /// A link that stops acknowledging (a connection stuck recovering from losses) holds frames back; after
    /// 10 s of silence one goes per 10 s, each coded at half the rate of the one before, not a frame a tick
    /// into a connection that carries nothing.
    @Test func aSilentLinkTakesOneSmallFrameAWhile() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1500)), link: SimulatedUplink(kbps: 1000))
        _ = publisher.run(duration: 10_000, bytes: 40_000)
        publisher.drain()
        var controller = publisher.controller
        let target = controller.targetKbps
        controller.sent(sequence: 300_000, bytes: 40_000, now: 50)
        controller.sent(sequence: 300_001, bytes: 40_000, now: 50.2)
        #expect(55 < controller.framesWaitUntil(queuedBytes: 0))
        #expect(60.3 >= controller.framesWaitUntil(queuedBytes: 0))
        controller.sent(sequence: 300_002, bytes: 20_000, now: 60.3)
        #expect(controller.targetKbps == target / 2)
        #expect((65 < controller.framesWaitUntil(queuedBytes: 0)) && (70.2 < controller.framesWaitUntil(queuedBytes: 0)))
        #expect(70.4 >= controller.framesWaitUntil(queuedBytes: 0))
    }

    /// A new connection forgets what was in flight (never to be acknowledged) but keeps what it learnt of the link.
    @Test func aNewConnectionForgetsWhatWasInFlight() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1000)), link: SimulatedUplink(kbps: 600))
        _ = publisher.run(duration: 10_000, bytes: 30_000)
        var controller = publisher.controller
        controller.sent(sequence: 5000, bytes: 500_000, now: 10)
        #expect(10 < controller.framesWaitUntil(queuedBytes: 0))
        let target = controller.targetKbps
        controller.connectionChanged()
        #expect(10 >= controller.framesWaitUntil(queuedBytes: 0))
        #expect(controller.targetKbps == target && controller.deliveryKbps != nil)
    }

    /// Never below the lowest useful rate, however thin the link.
    @Test func theTargetStaysWithinItsBounds() {
        var publisher = Harness(controller: UplinkController(configuration: .init(maximumKbps: 1500, minimumKbps: 100)), link: SimulatedUplink(kbps: 40))
        _ = publisher.run(duration: 30_000, bytes: 20_000)
        #expect(publisher.controller.targetKbps == 100)
        #expect(publisher.controller.deliveryKbps.map { $0 <= 45 } == true, "\(String(describing: publisher.controller.deliveryKbps))")
    }

    /// WHIP's receiver reports: heavy loss backs off by half of it, a clean link lets the target climb back,
    /// a growing round trip backs off too; never above the configured rate.
    @Test func receiverReportsDriveTheTargetByLossAndRoundTrip() {
        var controller = UplinkController(configuration: .init(maximumKbps: 2000))
        var bytes: UInt64 = 0
        var now = 0.0
        func report(lost: Double, rtt: Double, kbps: Double = 1500) -> Bool {
            now += 1
            bytes += UInt64(kbps * 1000 / 8)
            return controller.receiverReport(fractionLost: lost, roundTripMilliseconds: rtt, bytesSent: bytes, now: now)
        }
        _ = report(lost: 0, rtt: 40)
        #expect(controller.targetKbps == 2000 && controller.reason == .atMaximum)
        #expect(report(lost: 0.3, rtt: 40))
        #expect(controller.targetKbps == 1700 && controller.reason == .lossy(percent: 30))
        _ = report(lost: 0.05, rtt: 40)
        #expect(controller.targetKbps == 1700, "2–10 % lost: the target holds")
        for _ in 0..<30 { _ = report(lost: 0, rtt: 40) }
        #expect(controller.targetKbps == 2000, "climbs back on a clean link: \(controller.targetKbps)")
        _ = report(lost: 0, rtt: 400, kbps: 1000)
        #expect(controller.targetKbps <= 1000 && controller.reason == .backedOff(queuedMilliseconds: 360), "\(controller.reason)")
    }
}
