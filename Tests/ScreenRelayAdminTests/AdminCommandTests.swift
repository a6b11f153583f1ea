import ArgumentParser
import Foundation
@testable import ScreenRelayAdmin
import ScreenTransport
import ScreenWire
import Testing

/// What the admin commands take and print, without a relay.
struct AdminCommandTests {
    @Test func lifetimesAreReadAsPeopleWriteThem() {
        #expect(Lifetime.seconds("90") == 90 && Lifetime.seconds("90s") == 90)
        #expect(Lifetime.seconds("15m") == 900 && Lifetime.seconds("2h") == 7200 && Lifetime.seconds(" 7d ") == 7 * 86400)
        #expect(Lifetime.seconds("") == nil && Lifetime.seconds("-1h") == nil && Lifetime.seconds("soon") == nil)
    }

    @Test func aTokenLongerThanThirtyDaysOrUnreadableIsRefused() {
        func refusal(_ arguments: [String]) -> String {
            do {
                _ = try TokenCommand.parse(arguments)
                return ""
            } catch {
                return TokenCommand.message(for: error)
            }
        }
        #expect(refusal(["3f0c", "--expires", "31d"]) == "--expires must be at most 30 days, got 31d")
        #expect(refusal(["3f0c", "--expires", "soon"]) == "--expires takes a number of seconds or one with a unit (90s, 15m, 2h, 7d), got 'soon'")
        #expect(refusal(["3f0c", "--expires", "30d", "--role", "viewer"]) == "")
    }

    @Test func viewerIsWhatPeopleCallASubscriber() {
        #expect(Role(argument: "viewer") == .subscriber && Role(argument: "moderator") == .moderator && Role(argument: "boss") == nil)
    }

    @Test func answersArePrintedForPeople() {
        let created = SessionCredentials(sessionId: "3f0c", token: "eyJ", relayURL: "wss://relay.example.org/ws", viewerURL: "https://relay.example.org/v")
        #expect(RelayAdminOutput.created(created).split(separator: "\n").last == "publish: screenpub --server https://relay.example.org --token eyJ")
        let minted = TokenMinted(sessionId: "3f0c", token: "t", role: .subscriber, expiresAt: "2026-01-01T00:00:00Z", viewerURL: "https://v")
        #expect(RelayAdminOutput.minted(minted) == "token:   t\nrole:    subscriber, valid until 2026-01-01T00:00:00Z\nviewer:  https://v")
        #expect(RelayAdminOutput.sessions([]) == "no sessions" && RelayAdminOutput.archives([]) == "no archives")
        #expect(RelayAdminOutput.baseURL(of: "ws://127.0.0.1:8090/ws") == "http://127.0.0.1:8090")
        #expect(RelayAdminOutput.bytes(512) == "512 B" && RelayAdminOutput.bytes(3_400) == "3.4 kB" && RelayAdminOutput.bytes(12_000_000) == "12.0 MB")
        #expect(RelayAdminOutput.clock(3725.4) == "1:02:05")
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(RelayAdminOutput.age(since: now.addingTimeInterval(-59), now: now) == "59s")
        #expect(RelayAdminOutput.age(since: now.addingTimeInterval(-3 * 3600 - 120), now: now) == "3h2m")
        #expect(RelayAdminOutput.age(since: now.addingTimeInterval(-2 * 86400 - 3600), now: now) == "2d1h")
    }

    @Test func jsonIsSortedAndKeepsSlashes() {
        struct Downloaded: Encodable { var path: String; var bytes: Int }
        #expect(RelayAdminOutput.json(Downloaded(path: "a/b.webm", bytes: 3)) == "{\n  \"bytes\" : 3,\n  \"path\" : \"a/b.webm\"\n}")
    }
}
