import Foundation
import ScreenTesting
import Testing

/// What a failed fetch was, as the tests' Chromium says it (its net log): the reason a failure message gives
/// beside the status 0 a page's scripts see.
@Suite(.watchdog()) struct BrowserNetLogTests {
    @Test func aFetchThatWasRefusedIsNamedWithChromiumsReason() async throws {
        let refusing = try RefusingLoopbackPort()
        let url = "http://127.0.0.1:\(refusing.port)/viewer/viewer.js"
        let browser = try await HeadlessBrowser(url: url)
        defer { browser.close() }
        var failures: [FailedFetch] = []
        _ = try await eventually(30) {
            failures = browser.networkFailures()
            return failures.contains { $0.url == url }
        }
        #expect(failures.first { $0.url == url }?.reason == "ERR_CONNECTION_REFUSED", "\(failures)")
    }

    @Test func aLogCutShortByARunningBrowserIsReadLineByLine() throws {
        let text = """
            {"constants":{"logEventTypes":{"REQUEST_ALIVE":2,"URL_REQUEST_START_JOB":109},"netError":{"ERR_EMPTY_RESPONSE":-324}},
            "events": [
            {"params":{"url":"https://relay.test/viewer/a.js"},"phase":1,"source":{"id":7,"type":1},"time":"1","type":109},
            {"params":{"url":"https://relay.test/viewer/b.js"},"phase":1,"source":{"id":8,"type":1},"time":"1","type":109},
            {"params":{"net_error":-324},"phase":2,"source":{"id":7,"type":1},"time":"2","type":2},
            {"phase":2,"source":{"id":8,"type":1},"time":"2","type":2},
            {"params":{"net_error":-3},"phase":2,"source":{"id":9,"type
            """
        let log = try #require(ChromiumNetLog(text: text))
        #expect(log.failedRequests == [FailedFetch(url: "https://relay.test/viewer/a.js", reason: "ERR_EMPTY_RESPONSE")])
        #expect(ChromiumNetLog(text: "not a net log") == nil)
    }
}
