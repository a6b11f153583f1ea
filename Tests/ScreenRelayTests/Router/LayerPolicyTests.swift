import Testing

@testable import ScreenRelay

/// One subscriber's layers from made-up offers: what is queued for it, what its link has shown, the time.
@Suite struct LayerPolicyTests {
    let limits = RouterLimits()

    func offer(
        layer: Int, keyframe: Bool = false, top: Int = 2, queued: Double = 0, layers: Double? = nil, within: Bool = true,
        discardable: Bool = false, waiting: Bool = false
    ) -> LayerPolicy.Offer {
        .init(
            isKeyframe: keyframe, layer: layer, topLayer: top, discardable: discardable, queuedMilliseconds: queued,
            layersMilliseconds: layers ?? queued, withinQueueBounds: within, waitingForKeyframe: waiting)
    }

    func decide(_ policy: inout LayerPolicy, _ offer: LayerPolicy.Offer, rate: Double? = nil, fits: Bool = false, at now: Double) -> LayerPolicy.Verdict {
        policy.decide(offer, linkRate: rate, rateUpTo: { Double($0 + 1) * 10_000 }, fitsAbove: { fits }, now: now)
    }

    @Test func aBackloggedLinkLosesTheTopLayerOneStepAtATime() {
        var policy = LayerPolicy(now: 0, limits: limits)
        #expect(decide(&policy, offer(layer: 2, queued: 400), at: 1) == .thin, "past 300 ms: layer 2 goes")
        #expect(policy.effective(topLayer: 2) == 1)
        #expect(decide(&policy, offer(layer: 1, queued: 400), at: 1.2) == .send, "a step at most every 0.5 s")
        #expect(decide(&policy, offer(layer: 1, queued: 400), at: 1.6) == .thin && policy.effective(topLayer: 2) == 0)
        #expect(decide(&policy, offer(layer: 0, queued: 400), at: 2.2) == .send, "layer 0 always goes while it fits")
    }

    @Test func aLayerComesBackAfterCalmWithRoomAtALayerZeroFrame() {
        var policy = LayerPolicy(now: 0, limits: limits)
        _ = decide(&policy, offer(layer: 1, top: 1, queued: 400), at: 0)
        #expect(policy.effective(topLayer: 1) == 0)
        // Calm (under 100 ms) for 3 s on a link that showed 30 KB/s, 1.25 × layers 0–1 (20 KB/s) being 25 KB/s.
        _ = decide(&policy, offer(layer: 1, top: 1), rate: 30_000, at: 1)
        #expect(decide(&policy, offer(layer: 1, top: 1), rate: 30_000, at: 4.1) == .thin && policy.raisePending)
        #expect(decide(&policy, offer(layer: 0, top: 1), rate: 30_000, at: 4.2) == .send && policy.effective(topLayer: 1) == 1)
    }

    @Test func withoutRoomALayerComesBackOnlyAsAProbeWhoseWaitDoublesWhenUndone() {
        var policy = LayerPolicy(now: 0, limits: limits)
        _ = decide(&policy, offer(layer: 1, top: 1, queued: 400), at: 0)
        // 15 KB/s shown: no room for 25 KB/s. Not after 3 s; after 9 s (3 × raiseAfterSeconds) as a probe.
        _ = decide(&policy, offer(layer: 1, top: 1), rate: 15_000, at: 0.5)
        _ = decide(&policy, offer(layer: 1, top: 1), rate: 15_000, at: 4)
        #expect(!policy.raisePending)
        _ = decide(&policy, offer(layer: 1, top: 1), rate: 15_000, at: 9.6)
        #expect(policy.raisePending && policy.probeAfterSeconds == 9)
        _ = decide(&policy, offer(layer: 0, top: 1), rate: 15_000, at: 9.7)
        // The probe is undone within 10 s: the next waits twice as long, up to a minute.
        #expect(decide(&policy, offer(layer: 1, top: 1, queued: 400), rate: 15_000, at: 11) == .thin)
        #expect(policy.probeAfterSeconds == 18)
    }

    @Test func aKeyframeGoesWheneverItFitsAndOtherwiseSkips() {
        var policy = LayerPolicy(now: 0, limits: limits)
        #expect(decide(&policy, offer(layer: 0, keyframe: true, queued: 1900), at: 0) == .send)
        #expect(decide(&policy, offer(layer: 0, keyframe: true, queued: 2500, within: false), at: 1) == .skip)
        #expect(policy.effective(topLayer: 2) == 0, "it starts again from layer 0")
    }

    @Test func overTheBoundsALayerGoesAndLayerZeroSkips() {
        var policy = LayerPolicy(now: 0, limits: limits)
        #expect(decide(&policy, offer(layer: 2, layers: 0, within: false), at: 0) == .thin && policy.effective(topLayer: 2) == 1)
        #expect(decide(&policy, offer(layer: 0, layers: 0, within: false), at: 0.1) == .skip)
    }

    @Test func aDiscardableFrameAboveItsLayersFitsInOrIsHeld() {
        var policy = LayerPolicy(now: 0, limits: limits)
        policy.startAtLayerZero()
        #expect(decide(&policy, offer(layer: 1, discardable: true), fits: true, at: 0) == .fitIn)
        #expect(decide(&policy, offer(layer: 1, discardable: true), fits: false, at: 0.1) == .hold)
        #expect(decide(&policy, offer(layer: 1, discardable: false), fits: true, at: 0.2) == .thin, "not discardable: thinned")
    }

    @Test func noLayerComesBackWhileWaitingForAKeyframe() {
        var policy = LayerPolicy(now: 0, limits: limits)
        policy.startAtLayerZero()
        _ = decide(&policy, offer(layer: 0, keyframe: true, waiting: true), rate: 1e9, at: 10)
        #expect(!policy.raisePending)
        _ = decide(&policy, offer(layer: 1), rate: 1e9, at: 10.1)
        #expect(policy.raisePending)
    }
}
