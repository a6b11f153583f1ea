import Testing

@testable import ScreenRelay

@Suite struct SubscriberTableTests {
    @Test func itKeepsTheOrderOfSubscribingThroughRemovals() {
        var table = SubscriberTable<Int>()
        for (index, id) in ["d", "a", "c", "b"].enumerated() { table.insert(index, for: id) }
        #expect(table.ids == ["d", "a", "c", "b"] && table.values == [0, 1, 2, 3])
        #expect(table.remove("a") == 1 && table.remove("zz") == nil)
        #expect(table.ids == ["d", "c", "b"] && table["b"] == 3 && table.position(of: "b") == 2)
        table.insert(9, for: "c")
        #expect(table.ids == ["d", "c", "b"] && table["c"] == 9, "replaced where it is")
        table.insert(5, for: "a")
        #expect(table.ids.last == "a" && table.count == 4 && table.contains("a"))
        table.values[table.position(of: "d") ?? 0] += 1
        #expect(table["d"] == 1)
    }
}
