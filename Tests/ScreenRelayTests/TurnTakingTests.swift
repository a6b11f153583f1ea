import ScreenMedia
@testable import ScreenTesting
import Testing

/// How the suite's heavy tests take turns (``TurnTaking``): at most its width at once, and those waiting let in
/// by place — a serialized suite's next test first, then the first tests of serialized suites, then the rest —
/// first come, first served within each.
@Suite struct TurnTakingTests {
    @Test func waitersAreLetInByPlaceThenInTheOrderTheyCame() async throws {
        let turns = TurnTaking(width: 1)
        await turns.enter()
        let order = Locked<[String]>([])
        var waiting: [Task<Void, Never>] = []
        // Each waits before the next asks, so that the order they came in is known.
        for (name, place) in [("last 1", TurnTaking.Place.last), ("ahead 1", .ahead), ("first 1", .first), ("last 2", .last), ("ahead 2", .ahead), ("first 2", .first)] {
            waiting.append(Task {
                await turns.enter(place)
                order.withLock { $0.append(name) }
                turns.leave()
            })
            try await Task.sleep(for: .milliseconds(50))
        }
        turns.leave()
        for task in waiting { await task.value }
        #expect(order.value == ["first 1", "first 2", "ahead 1", "ahead 2", "last 1", "last 2"])
    }

    @Test func noMoreThanItsWidthHoldATurnAtOnce() async throws {
        let turns = TurnTaking(width: 3)
        let holding = Locked((now: 0, most: 0))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    await turns.enter(index % 3 == 0 ? .first : .last)
                    holding.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                    try? await Task.sleep(for: .milliseconds(5))
                    holding.withLock { $0.now -= 1 }
                    turns.leave()
                }
            }
        }
        #expect(holding.value.most == 3 && holding.value.now == 0, "\(holding.value)")
    }
}
