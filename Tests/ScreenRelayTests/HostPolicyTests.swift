@testable import ScreenRelay
import ScreenTesting
import Testing

/// Which Host and Origin the relay answers: pure, no sockets.
@Suite(.watchdog()) struct HostPolicyTests {
    let policy = HostPolicy.forRelay(
        listeningOn: "0.0.0.0", publicURL: "https://relay.example.org/", allowed: ["Screen.LAN"], machineNames: ["10.1.2.3", "fe80::1"])

    @Test func answersItsOwnNamesWithAnyPort() {
        for host in ["127.0.0.1:8090", "localhost", "LOCALHOST:80", "[::1]:8090", "127.8.9.10", "relay.example.org", "relay.example.org.",
            "screen.lan:8443", "10.1.2.3:8090", "[fe80::1]:8090"]
        {
            #expect(policy.allowsHost(host), "\(host)")
        }
        #expect(policy.allowsHost(nil), "HTTP/1.0 sends no Host")
    }

    @Test func refusesOtherNames() {
        for host in ["evil.example", "evil.example:8090", "127.0.0.1.evil.example", "relay.example.org.evil.example", "10.1.2.4", "[::2]:80", "0.0.0.0:8090"] {
            #expect(!policy.allowsHost(host), "\(host)")
        }
    }

    @Test func webSocketOriginsMustBeOurPages() {
        #expect(policy.allowsOrigin(nil), "programs that are no browser send no Origin")
        #expect(policy.allowsOrigin("http://127.0.0.1:8090"))
        #expect(policy.allowsOrigin("https://relay.example.org"))
        #expect(!policy.allowsOrigin("http://evil.example"))
        #expect(!policy.allowsOrigin("null"), "a sandboxed or file page")
        #expect(!policy.allowsOrigin("evil.example"))
    }

    @Test func aRelayListeningOnANameAnswersIt() {
        let named = HostPolicy.forRelay(listeningOn: "relay.internal", publicURL: nil, allowed: [], machineNames: [])
        #expect(named.allowsHost("relay.internal:8090"))
        #expect(!named.allowsHost("other.internal"))
    }
}
