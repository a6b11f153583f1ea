/// The largest (or smallest) of the values seen within the last `window` seconds: a monotonic deque, each value
/// dropped once a newer one is at least as extreme or it has aged out, so the front is always the extremum.
/// Pure: the caller passes the time.
struct WindowedExtremum: Sendable {
    enum Kind: Sendable { case maximum, minimum }

    private let kind: Kind
    private let window: Double
    private var values: [(value: Double, at: Double)] = []

    init(_ kind: Kind, window: Double) {
        self.kind = kind
        self.window = window
    }

    /// The extremum, nil before any value (or after ``removeAll()``).
    var value: Double? { values.first?.value }

    /// Adds `value`, seen at `now`, and returns the extremum with it.
    @discardableResult
    mutating func add(_ value: Double, now: Double) -> Double {
        values.removeAll { now - $0.at > window || (kind == .maximum ? $0.value <= value : $0.value >= value) }
        values.append((value, now))
        return values[0].value
    }

    mutating func removeAll() { values.removeAll() }
}
