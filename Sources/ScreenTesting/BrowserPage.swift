import Foundation

/// A page open in a real browser that a test reads by evaluating JavaScript in it: Chromium
/// (``HeadlessBrowser``), Firefox (``HeadlessFirefox``) or WebKitGTK (``WebKitGTKBrowser``), so that one check
/// runs in each engine.
public protocol BrowserPage: AnyObject, Sendable {
    /// Evaluates `expression` in the page and returns its value as JSON text ("null" for undefined).
    func evaluateJSON(_ expression: String) async throws -> String
    /// Ends the browser and removes what it left on disk.
    func close()
}

extension BrowserPage {
    /// Evaluates `expression` and decodes its JSON value.
    public func evaluate<Value: Decodable>(_ expression: String, as type: Value.Type = Value.self) async throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(try await evaluateJSON(expression).utf8))
    }

    /// What the page has loaded, for a failure message: its path (the token left out) and ready state, then each
    /// resource it fetched (its path, HTTP status, 0 where the fetch failed, and milliseconds).
    public func loadReport() async -> String {
        let expression = """
            location.pathname + ' (' + document.readyState + '): ' + performance.getEntriesByType('resource')
              .map(e => e.name.replace(location.origin, '').split('?')[0] + ' ' + (e.responseStatus ?? '?') + ' ' + Math.round(e.duration) + ' ms')
              .join(', ')
            """
        do { return try await evaluate(expression, as: String.self) } catch { return "the page could not be read: \(error)" }
    }
}
