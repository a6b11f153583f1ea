import Foundation

/// The connection data a token carries, by convention in URL-query form (`name=Ada%20Lovelace&team=blue`):
/// what the viewer, screensub and the admin commands show as a participant's name. Data in another form is
/// passed along untouched but never shown as a name.
public enum ConnectionData {
    /// The `name` field, decoded; nil when there is none (or it is empty).
    public static func name(in data: String) -> String? {
        for pair in data.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "name" else { continue }
            let value = String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(parts[1])
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        return nil
    }

    /// `name=…` (percent-encoded) followed by `extra` fields, if any.
    public static func with(name: String?, extra: String?) -> String {
        let fields = [name.map { "name=" + $0.percentEncodedComponent }, extra.flatMap { $0.isEmpty ? nil : $0 }]
        return fields.compactMap { $0 }.joined(separator: "&")
    }
}
