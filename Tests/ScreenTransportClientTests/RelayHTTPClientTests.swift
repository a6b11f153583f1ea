import Foundation
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import Testing

/// One HTTP exchange against a scripted server on a loopback port: the request as it goes out, the answer as
/// it comes back, and every way of getting none, in words.
@Suite(.watchdog()) struct RelayHTTPClientTests {
    /// The message of the error `body` throws, or nil.
    static func failure(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as RelayClientError {
            #expect(error.kind == .unreachable)
            return error.message
        } catch {
            Issue.record("not a RelayClientError: \(error)")
            return nil
        }
    }

    @Test func theRequestSaysWhoAsksWhatAndHowLongItsBodyIs() async throws {
        let server = try await ScriptedHTTPServer { _ in .http(204) }
        let json = Data(#"{"title":"standup"}"#.utf8)
        let url = "http://127.0.0.1:\(server.port)/session/a%20b?x=1&y=2"
        _ = try await RelayHTTPClient().send("POST", url, bearer: "s3cret", json: json, headers: [("X-Trace", "7")])
        let request = try #require(server.requests.first)
        #expect(request.requestLine == "POST /session/a%20b?x=1&y=2 HTTP/1.1", "the path and query as given, still encoded")
        #expect(request.header("Host") == "127.0.0.1:\(server.port)")
        #expect(request.header("Connection") == "close" && request.header("User-Agent") == "screenpub")
        #expect(request.header("Authorization") == "Bearer s3cret" && request.header("X-Trace") == "7")
        #expect(request.header("Content-Type") == "application/json" && request.header("Content-Length") == String(json.count))
        #expect(request.body == Array(json))
    }

    @Test func aBodilessGetSaysNoLengthAndOtherMethodsSayZero() async throws {
        let server = try await ScriptedHTTPServer { _ in .http(200) }
        let client = RelayHTTPClient()
        _ = try await client.send("GET", "http://127.0.0.1:\(server.port)")
        _ = try await client.send("DELETE", "http://127.0.0.1:\(server.port)/archive/1")
        let requests = server.requests.sorted { $0.requestLine < $1.requestLine }
        #expect(requests.map(\.requestLine) == ["DELETE /archive/1 HTTP/1.1", "GET / HTTP/1.1"], "no path is /")
        #expect(requests[0].header("Content-Length") == "0" && requests[0].header("Authorization") == nil)
        #expect(requests[1].header("Content-Length") == nil)
    }

    @Test func anIPv6AddressIsBracketedInTheHostHeader() async throws {
        let server: ScriptedHTTPServer
        do {
            server = try await ScriptedHTTPServer(host: "::1") { _ in .http(200) }
        } catch {
            try Test.cancel("this machine has no IPv6 loopback to listen on: \(error)")
        }
        // Foundation on Linux gives the URL's host with its brackets: the client connects to the address without them.
        _ = try await RelayHTTPClient().send("GET", "http://[::1]:\(server.port)/healthz")
        #expect(server.requests.first?.header("Host") == "[::1]:\(server.port)")
    }

    @Test func theAnswerCarriesItsStatusHeadersInOrderAndBody() async throws {
        let server = try await ScriptedHTTPServer { _ in .http(201, [("Location", "/a/1"), ("X-Part", "one"), ("x-part", "two")], body: Array("made".utf8)) }
        let response = try await RelayHTTPClient().send("POST", "http://127.0.0.1:\(server.port)/a")
        #expect(response.status == 201 && String(decoding: response.body, as: UTF8.self) == "made")
        #expect(response.header("location") == "/a/1", "names compared ignoring case")
        #expect(response.header("X-PART") == "one" && response.headers("X-Part") == ["one", "two"])
        #expect(response.headers("Missing").isEmpty && response.header("Missing") == nil)
    }

    @Test func anAnswerPastTheLimitIsRefusedAndOneAtItIsRead() async throws {
        let server = try await ScriptedHTTPServer { request in
            .http(200, body: Array(repeating: 7, count: request.requestLine.contains("/over") ? 1_001 : 1_000))
        }
        var client = RelayHTTPClient()
        client.maximumBody = 1_000
        #expect(try await client.send("GET", "http://127.0.0.1:\(server.port)/at").body.count == 1_000)
        let message = await Self.failure { _ = try await client.send("GET", "http://127.0.0.1:\(server.port)/over") }
        #expect(message == "cannot reach the relay at http://127.0.0.1:\(server.port)/over: its answer is larger than 1000 bytes")
    }

    @Test func aURLThatIsNotHTTPIsRefusedWithoutConnecting() async {
        for url in ["ftp://127.0.0.1/x", "ws://127.0.0.1/ws", "127.0.0.1:8090", "http://", "https:///session", "not a url"] {
            let message = await Self.failure { _ = try await RelayHTTPClient().send("GET", url) }
            #expect(message == "\(url) is not an http:// or https:// URL")
        }
    }

    @Test func aPortWhereNothingListensIsSaidSoNamingThePeer() async throws {
        let nowhere = try RefusingLoopbackPort()
        let url = "http://127.0.0.1:\(nowhere.port)/whip"
        let message = await Self.failure { _ = try await RelayHTTPClient(peer: "the WHIP endpoint").send("POST", url) }
        #expect(message == "cannot reach the WHIP endpoint at \(url): nothing listens there (connection refused)")
    }

    @Test func noAnswerWithinTheDeadlineEndsTheExchange() async throws {
        let server = try await ScriptedHTTPServer { _ in .silence }
        var client = RelayHTTPClient()
        client.timeoutSeconds = 1
        let started = ContinuousClock.now
        let message = await Self.failure { _ = try await client.send("GET", "http://127.0.0.1:\(server.port)/slow") }
        #expect(message == "cannot reach the relay at http://127.0.0.1:\(server.port)/slow: no answer within 1 s")
        // Ended by the deadline, not by the silent server (which never answers): well before a minute, though with
        // every test at once on two cores it has taken 16 s to say so.
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func aConnectionClosedWithoutAnAnswerIsSaidSo() async throws {
        let server = try await ScriptedHTTPServer { _ in .close }
        let url = "http://127.0.0.1:\(server.port)/"
        let message = await Self.failure { _ = try await RelayHTTPClient().send("GET", url) }
        // Closed after the request was read, or (on a slow machine) while it was still being written.
        let reasons = ["the connection closed before the answer was complete", "I/O on closed channel"]
        #expect(reasons.map { "cannot reach the relay at \(url): \($0)" }.contains(message ?? ""), "\(String(describing: message))")
    }

    @Test func anAnswerGivenBeforeTheBodyWasReadIsTheAnswer() async throws {
        // The server refuses on the head and closes with the body unread: the rest of the body meets a reset.
        let server = try await ScriptedHTTPServer(answerOnHead: true) { _ in .json(413, #"{"error":{"message":"too large"}}"#) }
        let body = Data(count: 8 << 20)
        let response = try await RelayHTTPClient().send("POST", "http://127.0.0.1:\(server.port)/upload", body: (body, "video/mp4"))
        #expect(response.status == 413)
    }

    @Test func aDownloadWritesASuccessfulAnswerOfAnySizeToTheFile() async throws {
        let large = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let server = try await ScriptedHTTPServer { request in
            request.requestLine.contains("/missing") ? .json(404, #"{"error":{"message":"no such archive"}}"#) : .http(200, body: large)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (name, expectedFile) in [("/missing", [UInt8]()), ("/archive", large)] {
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let file = try #require(FileHandle(forWritingAtPath: path))
            let response = try await RelayHTTPClient().download("http://127.0.0.1:\(server.port)" + name, bearer: "s", to: file)
            try file.close()
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(Array(written) == expectedFile, "\(name): \(written.count) bytes written")
            // A refusal is read as any answer, for its sentence; a success is in the file only.
            #expect(response.body.isEmpty == (name == "/archive"))
            #expect(response.status == (name == "/archive" ? 200 : 404))
        }
        #expect(server.requests.allSatisfy { $0.header("Authorization") == "Bearer s" })
    }

    @Test func anUploadIsTheStatusOfItsAnswer() async throws {
        let server = try await ScriptedHTTPServer { _ in .http(201) }
        let uploader: any HTTPUploader = RelayHTTPClient(peer: "the HLS origin")
        let status = try await uploader.upload("PUT", "http://127.0.0.1:\(server.port)/live/0.m4s", body: (Data([1, 2, 3]), "video/iso.segment"))
        #expect(status == 201)
        #expect(server.requests.first?.header("Content-Type") == "video/iso.segment" && server.requests.first?.body == [1, 2, 3])
    }
}
