import Foundation

/// Waits up to `seconds` for `condition`, checking every 50 ms; its last answer. A wait for what follows at once
/// (a connection closed, a budget given back) is for that it happens, not how fast: give it 30 s, since with every
/// test running at once on two cores a step that takes milliseconds alone has taken tens of seconds.
public func eventually(_ seconds: Double = 20, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// ``eventually(_:_:)`` for a condition that has to wait itself (a program run to ask something).
public func eventually(_ seconds: Double = 20, _ condition: () async -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return await condition()
}
