/// A stream's subscriptions by connection id, in the order they subscribed: every walk over them (a frame's
/// fan-out, the tick) takes them in the same order, so that the router's actions come in the same order every
/// run. Kept in an array, so that a frame's fan-out changes each subscription in place, with no lookup and no copy.
struct SubscriberTable<Value> {
    private(set) var ids: [String] = []
    /// In the order of ``ids``; changed in place by position.
    var values: [Value] = []
    private var positions: [String: Int] = [:]

    var count: Int { ids.count }
    var isEmpty: Bool { ids.isEmpty }
    var indices: Range<Int> { values.indices }

    func contains(_ id: String) -> Bool { positions[id] != nil }
    func position(of id: String) -> Int? { positions[id] }

    subscript(id: String) -> Value? {
        positions[id].map { values[$0] }
    }

    /// Adds a subscription at the end (one that is there already is replaced where it is).
    mutating func insert(_ value: Value, for id: String) {
        if let position = positions[id] {
            values[position] = value
            return
        }
        positions[id] = ids.count
        ids.append(id)
        values.append(value)
    }

    /// Removes a subscription (the others keep their order).
    @discardableResult
    mutating func remove(_ id: String) -> Value? {
        guard let position = positions.removeValue(forKey: id) else { return nil }
        ids.remove(at: position)
        let value = values.remove(at: position)
        for later in position..<ids.count { positions[ids[later]] = later }
        return value
    }
}
