import ScreenMedia
import Testing

@testable import ScreenSession

/// A relay publisher's pacing and its stream's announcement, from made-up inputs.
@Suite struct PublisherPacingTests {
    @Test func withoutAcknowledgementsOnlyAQueuedFrameHoldsTheNext() {
        var pacing = PublisherPacing(uplink: .init(maximumKbps: 1500))
        pacing.connected(acknowledges: false)
        pacing.sent(sequence: 0, bytes: 50_000, now: 0)
        #expect(pacing.acknowledged(sequence: 0, receivedAt: 100, now: 0.1) == false)
        #expect(pacing.advice(queuedFrames: 0, queuedBytes: 0).holdUntil == -.infinity)
        #expect(pacing.advice(queuedFrames: 1, queuedBytes: 10).holdUntil == .infinity)
        #expect(pacing.reportDue(now: 10) == nil)
        #expect(pacing.status(connected: true)?.reason.contains("predates protocol 3") == true)
    }

    @Test func theUplinkIsReportedWhenItChangesEveryTwoSecondsAtMost() {
        var pacing = PublisherPacing(uplink: .init(maximumKbps: 1500))
        pacing.connected(acknowledges: true)
        #expect(pacing.reportDue(now: 0)?.target == 1500)
        #expect(pacing.reportDue(now: 5) == nil, "unchanged")
        // The second frame waits 460 ms behind the first on the way: the target backs off.
        pacing.sent(sequence: 0, bytes: 20_000, now: 10)
        pacing.sent(sequence: 1, bytes: 20_000, now: 10.05)
        _ = pacing.acknowledged(sequence: 0, receivedAt: 10_500, now: 10.51)
        #expect(pacing.acknowledged(sequence: 1, receivedAt: 10_600, now: 10.61) == true)
        let report = pacing.reportDue(now: 10.61)
        #expect(report.map { $0.target < 1500 } == true, "\(String(describing: report))")
        pacing.connectionChanged()
        #expect(pacing.reportDue(now: 11) == nil && !pacing.measures, "a new connection measures once welcomed")
        pacing.connected(acknowledges: true)
        #expect(pacing.reportDue(now: 11) != nil, "reported again on the new connection")
    }
}

@Suite struct AnnouncedPropertiesTests {
    @Test func eachChangeCountsARevisionAndShowsInTheProperties() {
        var announced = AnnouncedProperties(framesPerSecond: 5, audio: nil)
        let first = announced.properties(codec: .vp9, width: 640, height: 480, keyframe: [])
        #expect(first.hasVideo && first.hasAudio && first.estimatedFramesPerSecond == 5)
        #expect(announced.revision == 0)
        announced.setVideoEnabled(false)
        announced.setFramesPerSecond(10)
        #expect(announced.revision == 2)
        let now = announced.updated(first)
        #expect(!now.hasVideo && !now.hasAudio && now.estimatedFramesPerSecond == 10 && now.width == 640)
    }

    @Test func captureDelaysAreSmoothedAndNotANumberIsNone() {
        var announced = AnnouncedProperties(framesPerSecond: 5, audio: nil)
        announced.noteCaptureDelay(20)
        announced.noteCaptureDelay(.nan)
        announced.noteCaptureDelay(30)
        #expect(announced.properties(codec: .vp9, width: 8, height: 8, keyframe: []).estimatedCaptureDelayMilliseconds == 21)
    }
}
