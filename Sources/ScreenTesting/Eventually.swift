import Foundation

/// Waits up to `seconds` for `condition`, checking every 50 ms; its last answer.
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
