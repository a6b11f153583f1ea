import Foundation
public import ScreenMedia

/// A page open in a real browser that a test reads by evaluating JavaScript in it: Chromium
/// (``HeadlessBrowser``), Firefox (``HeadlessFirefox``) or WebKitGTK (``WebKitGTKBrowser``), so that one check
/// runs in each engine.
public protocol BrowserPage: AnyObject, Sendable {
    /// Evaluates `expression` in the page and returns its value as JSON text ("null" for undefined).
    func evaluateJSON(_ expression: String) async throws -> String
    /// Ends the browser and removes what it left on disk.
    func close()
    /// The requests that failed so far, each with the browser's reason, where the browser says (Chromium does).
    func networkFailures() -> [FailedFetch]
}

/// A request a browser made that failed, and the browser's reason.
public struct FailedFetch: Sendable, Equatable {
    public var url: String
    public var reason: String

    public init(url: String, reason: String) {
        (self.url, self.reason) = (url, reason)
    }
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
        let failed = await failedFetchesOfItsServer()
        let failures = failed.map { failed in failed.fetches.isEmpty ? "" : "; failed: " + failed.described } ?? ""
        do { return try await evaluate(expression, as: String.self) + failures } catch { return "the page could not be read: \(error)" }
    }

    /// The fetches of the page's own server that failed (not the browser's calls home), and them as a list of paths
    /// (the token left out) with the browser's reasons; nil when the page cannot be read.
    private func failedFetchesOfItsServer() async -> (fetches: [FailedFetch], described: String)? {
        guard let origin = try? await evaluate("location.origin", as: String.self) else { return nil }
        let ours = networkFailures().filter { $0.url.hasPrefix(origin + "/") }
        return (ours, ours.map { "\($0.url.dropFirst(origin.count).prefix { $0 != "?" }) \($0.reason)" }.joined(separator: ", "))
    }

    public func networkFailures() -> [FailedFetch] { [] }

    /// For a page whose script never ran: when some of its server's fetches failed and the browser says why, and
    /// none failed because the server cut or botched the answer, reloads the page once, as a person would, and
    /// returns what failed (the tests' Chromium, starved of the processor with every test at once, has given up
    /// on a module or two by itself). Nil when it did not reload: nothing failed, the browser does not say why, or
    /// the server is to blame (the caller's failure then stands, with ``loadReport()``).
    private func reloadAfterTheBrowsersOwnFailure() async -> String? {
        guard let failed = await failedFetchesOfItsServer(), !failed.fetches.isEmpty,
            !failed.fetches.contains(where: { Self.serversFault.contains($0.reason) }),
            (try? await evaluate("(setTimeout(() => location.reload(), 0), true)", as: Bool.self)) == true
        else { return nil }
        return failed.described
    }

    /// In a wait for a page's script to run: when the page has loaded without it, reloads it once after the browser's
    /// own failure (``reloadAfterTheBrowsersOwnFailure()``), `reloaded` remembering that it did, and says so.
    public func reloadOnceIfItsScriptFailedToLoad(_ reloaded: Locked<Bool>) async {
        guard !reloaded.value, (try? await evaluate("document.readyState", as: String.self)) == "complete",
            let failed = await reloadAfterTheBrowsersOwnFailure()
        else { return }
        reloaded.withLock { $0 = true }
        print("the page was loaded again: the browser failed \(failed)")
    }

    /// Net errors that say the server (or a proxy before it) closed, reset or botched an answer.
    private static var serversFault: Set<String> {
        [
            "ERR_CONNECTION_RESET", "ERR_CONNECTION_CLOSED", "ERR_CONNECTION_REFUSED", "ERR_EMPTY_RESPONSE",
            "ERR_CONTENT_LENGTH_MISMATCH", "ERR_INCOMPLETE_CHUNKED_ENCODING", "ERR_INVALID_HTTP_RESPONSE",
            "ERR_RESPONSE_HEADERS_TRUNCATED", "ERR_SSL_PROTOCOL_ERROR", "ERR_HTTP2_PROTOCOL_ERROR",
        ]
    }
}
