import Foundation

/// Chromium's own record of its network (`--log-net-log`), read for the requests that failed and why: a page
/// whose fetch failed shows only status 0 to its scripts, and the net error tells a server that cut the connection
/// (`ERR_CONNECTION_RESET`, `ERR_EMPTY_RESPONSE`) from Chromium giving up by itself.
///
/// Chromium writes the log as it goes: a first line with the constants (the names of event types and net errors),
/// then one event a line; the closing brackets come only when it exits, so the file is read line by line.
public struct ChromiumNetLog: Sendable {
    /// The requests that ended with a net error, each with Chromium's name of it (`ERR_CONNECTION_RESET` say, or its
    /// number when the log names none).
    public let failedRequests: [FailedFetch]

    /// Reads the log at `path`; nil when there is none or it cannot be read.
    public init?(path: String) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        self.init(text: text)
    }

    public init?(text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).makeIterator()
        guard let first = lines.next(), first.hasPrefix("{\"constants\":"),
            let constants = Self.object(first.hasSuffix(",") ? first.dropLast() + "}" : first + "}")?["constants"] as? [String: Any],
            let eventTypes = constants["logEventTypes"] as? [String: Int]
        else { return nil }
        let errorNames = Dictionary((constants["netError"] as? [String: Int] ?? [:]).map { ($0.value, $0.key) }) { first, _ in first }
        let (startJob, alive) = (eventTypes["URL_REQUEST_START_JOB"], eventTypes["REQUEST_ALIVE"])
        // A request's URL comes with the start of its job; its end, with the error if any.
        var urls: [Int: String] = [:]
        var failed: [FailedFetch] = []
        while let line = lines.next() {
            guard line.hasPrefix("{"), line.contains("\"source\"") else { continue }
            guard let event = Self.object(line.hasSuffix(",") ? line.dropLast() : line[...]),
                let type = event["type"] as? Int, type == startJob || type == alive,
                let source = (event["source"] as? [String: Any])?["id"] as? Int
            else { continue }
            let parameters = event["params"] as? [String: Any] ?? [:]
            if type == startJob, let url = parameters["url"] as? String {
                urls[source] = urls[source] ?? url
            } else if type == alive, let code = parameters["net_error"] as? Int, code != 0 {
                failed.append(FailedFetch(url: urls[source] ?? "?", reason: errorNames[code] ?? "net error \(code)"))
            }
        }
        failedRequests = failed
    }

    private static func object(_ text: some StringProtocol) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}
