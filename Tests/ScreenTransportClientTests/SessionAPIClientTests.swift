import Foundation
import ScreenTesting
import ScreenTransport
import ScreenWire
import Testing

@testable import ScreenTransportClient

/// The session API as the admin commands and screenpub call it, against a scripted server: the requests it
/// makes, the answers it reads, and the sentence each failure becomes.
@Suite(.watchdog()) struct SessionAPIClientTests {
    static let archive = #"{"id":"a/1","sessionId":"s1","name":"standup","status":"available","reason":"","createdAt":"2026-11-22T05:10:22Z","duration":1.5,"size":10,"streams":1,"resolution":"640x360","sha256":null}"#

    /// A scripted relay answering each path as `answers` says (by method and path, query included), else 404.
    static func relay(_ answers: [String: ScriptedHTTPServer.Answer]) async throws -> ScriptedHTTPServer {
        try await ScriptedHTTPServer { request in
            let parts = request.requestLine.split(separator: " ")
            return answers["\(parts[0]) \(parts[1])"] ?? .http(404)
        }
    }

    /// The message of the error `body` throws, or nil.
    static func failure(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as SessionAPIError {
            return error.message
        } catch {
            Issue.record("not a SessionAPIError: \(error)")
            return nil
        }
    }

    @Test func aSessionIsMadeWithTheSecretAndATitle() async throws {
        let credentials = #"{"sessionId":"s1","token":"t","relayURL":"ws://r/ws","viewerURL":"http://r/view/s1?token=v"}"#
        let server = try await Self.relay(["POST /session": .json(200, credentials)])
        // A trailing slash on the server's address is not doubled.
        let client = SessionAPIClient(server: "http://127.0.0.1:\(server.port)/", secret: "s3cret")
        #expect(client.server == "http://127.0.0.1:\(server.port)")
        let made = try await client.createSession(title: "standup")
        #expect(made == SessionCredentials(sessionId: "s1", token: "t", relayURL: "ws://r/ws", viewerURL: "http://r/view/s1?token=v"))
        _ = try await client.createSession(title: nil)
        let requests = server.requests
        #expect(requests.map(\.requestLine) == ["POST /session HTTP/1.1", "POST /session HTTP/1.1"])
        #expect(requests.allSatisfy { $0.header("Authorization") == "Bearer s3cret" })
        let bodies = try requests.map { try JSONDecoder().decode(SessionRequest.self, from: Data($0.body)) }
        #expect(bodies == [SessionRequest(title: "standup"), SessionRequest(title: "")], "no title is an empty one")
    }

    @Test func namesInPathsAndQueriesArePercentEncoded() async throws {
        let minted = #"{"sessionId":"s/1","token":"t","role":"subscriber","expiresAt":"2026-11-22T06:10:22Z","viewerURL":null}"#
        let items = #"{"items":[\#(Self.archive)]}"#
        let server = try await Self.relay([
            "POST /session/s%2F1/token": .json(200, minted), "GET /archive?sessionId=s%201": .json(200, items), "GET /archive": .json(200, items),
            "POST /archive/a%2F1/stop": .json(200, Self.archive), "DELETE /archive/a%2F1": .http(204), "POST /archive": .json(200, Self.archive),
        ])
        let client = SessionAPIClient(server: "http://127.0.0.1:\(server.port)", secret: "s")
        let token = try await client.mintToken(session: "s/1", role: .subscriber, name: "Ada Lovelace", data: "team=blue", expiresIn: 60)
        #expect(token.role == .subscriber && token.viewerURL == nil)
        let request = try #require(server.requests.first)
        #expect(
            try JSONDecoder().decode(TokenRequest.self, from: Data(request.body))
                == TokenRequest(role: "subscriber", expiresIn: 60, data: "name=Ada%20Lovelace&team=blue"))
        #expect(try await client.archives(session: "s 1").map(\.id) == ["a/1"])
        #expect(try await client.archives(session: nil).first?.createdAt == Date(timeIntervalSince1970: 1_795_324_222))
        #expect(try await client.stopArchive("a/1").status == .available)
        try await client.deleteArchive("a/1")
        #expect(try await client.startArchive(session: "s1", name: "standup").name == "standup")
        let started = try #require(server.requests.last)
        #expect(try JSONDecoder().decode(ArchiveStartRequest.self, from: Data(started.body)) == ArchiveStartRequest(sessionId: "s1", name: "standup"))
    }

    @Test func aRefusalIsTheRelaysOwnSentenceWithWhatItsStatusMeans() {
        func refusal(_ status: Int, _ body: String) -> String {
            SessionAPIClient.refusal(RelayHTTPClient.Response(status: status, body: Data(body.utf8)))
        }
        #expect(
            refusal(401, #"{"error":{"message":"wrong secret"}}"#)
                == "the relay refused the secret (wrong secret): use the secret the relay reads (--secret-file, $SCREENRELAY_SECRET)")
        #expect(refusal(404, "") == "not found (HTTP 404)")
        #expect(refusal(404, #"{"error":{"message":"no session s9"}}"#) == "no session s9")
        #expect(refusal(502, "  bad gateway\n") == "bad gateway", "a body that is not the relay's JSON, trimmed")
        #expect(refusal(503, "") == "the relay answered HTTP 503")
        #expect(refusal(500, String(repeating: "x", count: 1_000)).count == 200, "at most 200 bytes of someone else's page")
    }

    @Test func aFailedCallIsASentenceThatSaysWhatToDo() async throws {
        let server = try await Self.relay([
            "GET /session": .json(401, #"{"error":{"message":"wrong secret"}}"#), "GET /archive": .http(200, body: Array("<html>hello</html>".utf8)),
        ])
        let address = "http://127.0.0.1:\(server.port)"
        let client = SessionAPIClient(server: address, secret: "wrong")
        #expect(await Self.failure { _ = try await client.sessions() }?.hasPrefix("the relay refused the secret (wrong secret)") == true)
        #expect(
            await Self.failure { _ = try await client.archives(session: nil) }
                == "the server at \(address) answered GET /archive with something that is not a screenrelay's answer: is --server a screenrelay?")
        // Where nothing listens: a port held unlistened, since the server's own port, once freed, may be bound again at
        // once by another test's server.
        let nowhere = try RefusingLoopbackPort()
        let goneAddress = "http://127.0.0.1:\(nowhere.port)"
        let gone = await Self.failure { _ = try await SessionAPIClient(server: goneAddress, secret: "wrong").sessions() }
        #expect(
            gone == "cannot reach the relay at \(goneAddress)/session: nothing listens there (connection refused) "
                + "(is screenrelay running there? give its address with --server URL)")
    }

    @Test func anArchiveIsDownloadedThroughAPartFileThatReplacesTheOldOne() async throws {
        let webm = Array(repeating: UInt8(0x1A), count: 5_000)
        let server = try await Self.relay([
            "GET /archive/a%2F1/download?stream=0": .http(200, body: webm),
            "GET /archive/a%2F1/download?stream=1": .json(404, #"{"error":{"message":"no stream 1"}}"#),
        ])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/standup.webm"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let client = SessionAPIClient(server: "http://127.0.0.1:\(server.port)", secret: "s")
        #expect(try await client.downloadArchive("a/1", stream: 0, to: path) == (path, webm.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(webm))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["standup.webm"], "no part file left")
        // A refusal leaves no file of its own behind.
        let other = directory + "/stream1.webm"
        #expect(await Self.failure { _ = try await client.downloadArchive("a/1", stream: 1, to: other) } == "no stream 1")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["standup.webm"])
        let unwritable = await Self.failure { _ = try await client.downloadArchive("a/1", stream: 0, to: "/nonexistent-dir/a.webm") }
        #expect(unwritable?.hasPrefix("cannot write /nonexistent-dir/a.webm: ") == true, "\(String(describing: unwritable))")
    }

    /// Without a name given, the file is named by what the relay serves: `.mkv` for Matroska (an H.264 stream),
    /// and a `.webm` name given for Matroska is made `.mkv`.
    @Test func anUnnamedDownloadTakesTheSuffixOfItsMediaType() async throws {
        let server = try await Self.relay([
            "GET /archive/a/download?stream=0": .http(200, [("Content-Type", "video/x-matroska")], body: [0x1A, 0x45]),
            "GET /archive/a/download?stream=1": .http(200, [("Content-Type", "video/webm")], body: [0x1A]),
        ])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let client = SessionAPIClient(server: "http://127.0.0.1:\(server.port)", secret: "s")
        #expect(try await client.downloadArchive("a", stream: 0, named: directory + "/a-0") == (directory + "/a-0.mkv", 2))
        #expect(try await client.downloadArchive("a", stream: 1, named: directory + "/a-1") == (directory + "/a-1.webm", 1))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["a-0.mkv", "a-1.webm"])
        // A .webm name given for Matroska becomes .mkv (players trust the name); other names are kept.
        #expect(try await client.downloadArchive("a", stream: 0, to: directory + "/standup.WEBM") == (directory + "/standup.mkv", 2))
        #expect(try await client.downloadArchive("a", stream: 0, to: directory + "/copy") == (directory + "/copy", 2))
    }
}
