import ScreenMedia
import ScreenWire
import Testing

@testable import ScreenRelay

/// Which of a stream's frames are admitted, from made-up capture times and arrival times.
@Suite struct FrameAdmissionTests {
    func shares(_ limits: RouterLimits) -> TokenShares {
        var shares = TokenShares(limits: limits.tokenShares)
        _ = shares.join("publisher", token: "t", role: .publisher)
        return shares
    }

    @Test func aRunOfRefusedFramesIsToldOnce() {
        let limits = RouterLimits()
        var admission = FrameAdmission(limits: limits)
        var shares = shares(limits)
        func admit(_ seconds: Double, at now: Double) -> FrameAdmission.Refusal? {
            admission.admit(MediaTime(seconds: seconds, timescale: 1_000_000), kind: .video, publisher: "publisher", now: now, shares: &shares)
        }
        #expect(admit(10, at: 0) == nil && admit(10.2, at: 0.2) == nil)
        let first = admit(9, at: 0.4)
        #expect(first?.limit == .captureTime && first?.explanation?.contains("earlier than the previous one's") == true)
        #expect(admit(9.1, at: 0.5) == FrameAdmission.Refusal(limit: .captureTime, explanation: nil), "counted, not told again")
        #expect(admit(10.4, at: 0.6) == nil)
        #expect(admit(200, at: 0.8)?.explanation?.contains("ahead of the relay's clock") == true, "told again after an admitted frame")
    }

    @Test func framesFasterThanTheStreamsRateAreRefused() {
        let limits = RouterLimits()
        var admission = FrameAdmission(limits: limits)
        var shares = shares(limits)
        // 240 a second, 480 at once: 1000 frames in one instant.
        let refused = (0..<1000).compactMap {
            admission.admit(MediaTime(value: Int64($0), timescale: 1000), kind: .video, publisher: "publisher", now: 0, shares: &shares)
        }
        #expect(refused.count == 520 && refused.allSatisfy { $0.limit == .frameRate })
        #expect(refused.first?.explanation?.contains("faster than 240 a second") == true && refused.dropFirst().allSatisfy { $0.explanation == nil })
        // Audio has an allowance of its own.
        #expect(admission.admit(.zero, kind: .audio, publisher: "publisher", now: 0, shares: &shares) == nil)
    }
}
