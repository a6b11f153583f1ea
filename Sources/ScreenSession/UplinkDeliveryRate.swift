/// What the publisher's uplink delivers, from frames' carrying times (``UplinkController`` works them out from
/// the acknowledgements): bytes over seconds of transfer, both decaying — down fast, up slowly, so that a link that
/// narrowed shows in the next few frames, not the next twenty — and never above the slope of an idle link's
/// carrying time against frame size (``IdleLinkFit``), where frames of different sizes have shown it.
struct UplinkDeliveryRate: Sendable {
    /// Frames smaller than this are not used: keepalives and a cursor blink take about the way's own delay
    /// whatever the rate, and say nothing about it.
    static var smallestMeasuredFrame: Int { 3000 }
    /// A sample under this share of the rate is a narrowing: the old measure then decays faster.
    static var narrowedBelow: Double { 0.8 }
    static var decay: Double { 0.8 }
    static var narrowedDecay: Double { 0.5 }
    /// The idle link's slope never takes the rate below this share of the measure.
    static var slopeFloor: Double { 0.7 }

    private var deliveredBytes = 0.0
    private var deliverySeconds = 0.0
    private var idleLink = IdleLinkFit()

    /// kbit/s; nil before it is known.
    var kbps: Int? {
        guard deliverySeconds > 0.05, deliveredBytes > 8_000 else { return nil }
        let measured = deliveredBytes * 8 / deliverySeconds / 1000
        return Int(idleLink.kbps.map { min(measured, max($0, Self.slopeFloor * measured)) } ?? measured)
    }

    /// A frame of `bytes` took `milliseconds` to be carried; `ontoIdleLink`: it was sent onto an idle link (its
    /// whole time on the way was carrying time, which the idle link's line also takes).
    mutating func add(bytes: Int, milliseconds: Double, ontoIdleLink: Bool) {
        guard milliseconds > 0, milliseconds.isFinite, bytes >= Self.smallestMeasuredFrame else { return }
        let sampleKbps = Double(bytes) * 8 / milliseconds
        let narrowed = kbps.map { sampleKbps < Self.narrowedBelow * Double($0) } == true
        // Points from before a narrowing would bend the line for as long as they weigh: it starts over.
        if narrowed { idleLink = IdleLinkFit() }
        let decay = narrowed ? Self.narrowedDecay : Self.decay
        deliveredBytes = deliveredBytes * decay + Double(bytes)
        deliverySeconds = deliverySeconds * decay + milliseconds / 1000
        if ontoIdleLink { idleLink.add(bytes: bytes, milliseconds: milliseconds) }
    }
}
