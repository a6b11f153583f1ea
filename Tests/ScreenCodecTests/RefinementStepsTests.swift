import Testing

@testable import ScreenCodec

/// A change refined in parts, from made-up quantizers and sizes: where the parts go, how far each moves, and
/// when they stop.
@Suite struct RefinementStepsTests {
    @Test func nothingIsDueBeforeAChangeNorWhenTheLibraryCannotTell() {
        var steps = RefinementSteps(goal: 12)
        #expect(steps.nextQuantizer == nil)
        steps.changed(codedAt: nil)
        #expect(steps.nextQuantizer == nil, "no quantizer to start from")
    }

    @Test func partsGoFinerUntilTheGoalAndThenStop() {
        var steps = RefinementSteps(goal: 12)
        steps.changed(codedAt: 50)
        var quantizers: [Int] = []
        while let next = steps.nextQuantizer {
            quantizers.append(next)
            steps.refined(at: next, bytes: 20_000, budgetBytes: 20_000)
        }
        #expect(quantizers == [44, 34, 24, 14, 12], "parts on their budget keep their steps: \(quantizers)")
        #expect(steps.codedAt == 12)
    }

    @Test func aStillScreenGetsAtMostSoManyParts() {
        var steps = RefinementSteps(goal: 0)
        steps.changed(codedAt: 63)
        var parts = 0
        while let next = steps.nextQuantizer {
            parts += 1
            steps.refined(at: next, bytes: 20_000, budgetBytes: 20_000)
        }
        #expect(parts == RefinementSteps.mostSteps)
        #expect((steps.codedAt ?? 0) > 0, "stopped short of the goal")
    }

    @Test func aPartOverItsBudgetMovesTheNextOneLessFarAndOneUnderFurther() {
        var steps = RefinementSteps(goal: 0)
        steps.changed(codedAt: 60)
        let (first, later) = (steps.firstStepSize, steps.stepSize)
        steps.refined(at: 60 - first, bytes: 40_000, budgetBytes: 20_000)
        #expect(steps.firstStepSize == first / 2 && steps.stepSize == later, "the first part, twice its budget")
        steps.refined(at: 40, bytes: 5_000, budgetBytes: 20_000)
        #expect(steps.stepSize > later && steps.firstStepSize == first / 2, "a later part, a quarter of its budget")
        steps.refined(at: 20, bytes: 1, budgetBytes: 20_000)
        #expect(steps.stepSize == RefinementSteps.stepRange.upperBound)
        steps.changed(codedAt: 60)
        for _ in 0..<10 { steps.refined(at: 59, bytes: 10_000_000, budgetBytes: 20_000) }
        #expect(steps.firstStepSize == RefinementSteps.stepRange.lowerBound && steps.stepSize == RefinementSteps.stepRange.lowerBound)
        steps.refined(at: 59, bytes: 20_000, budgetBytes: 0)
        #expect(steps.stepSize == RefinementSteps.stepRange.lowerBound, "no budget: no lesson")
    }

    @Test func aChangeStartsThePartsOverFromTheCoarserOfTheTwo() {
        var steps = RefinementSteps(goal: 12)
        steps.changed(codedAt: 50)
        steps.refined(at: 40, bytes: 20_000, budgetBytes: 20_000)
        steps.refined(at: 30, bytes: 20_000, budgetBytes: 20_000)
        #expect(steps.steps == 2)
        steps.changed(codedAt: 45)
        #expect(steps.steps == 0 && steps.codedAt == 45, "a coarse change: the picture is only as fine as it")
        steps.refined(at: 35, bytes: 20_000, budgetBytes: 20_000)
        steps.changed(codedAt: 20)
        #expect(steps.codedAt == 35, "a small change coded finely leaves the rest as coarse as it was")
        steps.reset()
        #expect(steps.nextQuantizer == nil)
    }
}
