/// A picture that changed under a target that follows the link, refined in parts: each change is coded within
/// about a capture tick of the link (``RateControl/partMilliseconds``), and the unchanged picture is
/// coded again at the following ticks, each time at a finer quantizer, each part again within about a tick of
/// the link, until the picture is coded as finely as a still screen's refinement is
/// (``RateControl/refinementMaxQuantizer``), ``mostSteps`` parts were sent, or the next change comes.
///
/// Why parts: on a thin link a page of text that is one frame is as late as its own transmit time (70 % of
/// 1 Mbit/s at two pages a second is 0.35 s a page); a page in parts of a tick each keeps every frame's delay
/// near a tick while the parts after it keep the link busy. A pure state machine: the encoder tells it the
/// quantizer each frame was coded with and the bytes each part took, it answers with the next part's quantizer.
struct RefinementSteps: Hashable {
    /// The most parts after a change: what a still screen costs at most before it sends nothing again. From a
    /// page coded at the coarsest quantizers (50–63) to ``RateControl/refinementMaxQuantizer`` is 40–50 steps,
    /// some 10 a part.
    static let mostSteps = 5
    /// How far a part moves the quantizer at most and at least: a part that moves it less than this is not worth
    /// its frame, one that moves it more would take several ticks of a thin link.
    static let stepRange = 3...20
    /// The quantizer the picture is coded at now, where it was coded since the last complete refinement; nil
    /// when nothing waits to be refined.
    private(set) var codedAt: Int?
    /// Parts sent since the last change.
    private(set) var steps = 0
    /// How far the first part after a change moves the quantizer, and how far the parts after it do: learnt from
    /// the parts' sizes, apart, and kept from change to change (the content's cost of a step changes slowly). Apart,
    /// because the first part costs far more for a step: measured on 1080p pages of text (AV1, a page at quantizer
    /// 63 in 15–22 KB), the first part took 26–31 KB for 5–7 steps and 41–50 KB for 11–20, a part after it 6–9 KB
    /// for 4–5 steps (the coarse page leaves a residual in every block of text, whatever step is taken).
    private(set) var firstStepSize = 6
    private(set) var stepSize = 10
    /// The finest quantizer the parts go to.
    let goal: Int

    init(goal: Int = RateControl.refinementMaxQuantizer) { self.goal = goal }

    /// A change was coded at `quantizer` (of 0–63; nil when the library cannot tell, and then no parts follow):
    /// the picture is as fine as the coarser of it and what was there, and its parts start over.
    mutating func changed(codedAt quantizer: Int?) {
        guard let quantizer else {
            codedAt = nil
            return
        }
        codedAt = max(codedAt ?? quantizer, quantizer)
        steps = 0
    }

    /// The quantizer of the next part; nil when none is due.
    var nextQuantizer: Int? {
        guard let codedAt, codedAt > goal, steps < Self.mostSteps else { return nil }
        return max(goal, codedAt - (steps == 0 ? firstStepSize : stepSize))
    }

    /// A part was coded at `quantizer` in `bytes`, against a budget of `budgetBytes` (a tick of the link): the
    /// next part moves the quantizer further if this one took less than its budget, less far if it took more, in
    /// proportion (a small step's bytes grow about as far as it moves the quantizer).
    mutating func refined(at quantizer: Int, bytes: Int, budgetBytes: Int) {
        let first = steps == 0
        steps += 1
        codedAt = min(codedAt ?? quantizer, quantizer)
        guard budgetBytes > 0 else { return }
        let ratio = max(1.0 / 16, min(16, Double(max(1, bytes)) / Double(budgetBytes)))
        // Only off by more than a tenth: a budget met is not a reason to swing.
        guard ratio > 1.1 || ratio < 1 / 1.1 else { return }
        func adapted(_ size: Int) -> Int { min(Self.stepRange.upperBound, max(Self.stepRange.lowerBound, Int((Double(size) / ratio).rounded()))) }
        if first { firstStepSize = adapted(firstStepSize) } else { stepSize = adapted(stepSize) }
    }

    /// The encoder was opened anew (a keyframe follows, counted as a change).
    mutating func reset() {
        codedAt = nil
        steps = 0
    }
}
