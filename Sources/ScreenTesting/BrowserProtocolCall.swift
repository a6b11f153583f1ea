import Foundation
import ScreenMedia

/// One call to a browser's remote protocol (Chromium's DevTools, Firefox's WebDriver BiDi) on a connection of its
/// own, bounded in time: a browser that stops answering (a loaded machine, a wedged page) fails the call instead
/// of hanging the test.
enum BrowserProtocolCall {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `exchange`, which puts the answer (a JSON message) in the box it is given, for at most `timeout`
    /// seconds; returns the answer's `result` object. `method` and `protocolName` name the call in failures.
    static func result(
        of method: String, protocolName: String, timeout: Double, exchange: @escaping @Sendable (_ answer: Locked<String?>) async throws -> Void
    ) async throws -> [String: Any] {
        let reply = Locked<String?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await exchange(reply) }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw Failure(description: "\(protocolName) did not answer \(method) within \(Int(timeout)) s")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        guard let answer = reply.value,
            let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        else { throw Failure(description: "\(protocolName) gave no answer to \(method)") }
        guard let result = object["result"] as? [String: Any] else {
            throw Failure(description: "\(protocolName) refused \(method): \(answer.prefix(500))")
        }
        return result
    }
}
