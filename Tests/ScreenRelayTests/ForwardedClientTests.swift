@testable import ScreenRelay
import ScreenTesting
import Testing

/// Whose address a connection counts as: the peer's own, unless the peer is a proxy the relay was told to trust.
@Suite struct ForwardedClientTests {
    let proxies: Set<String> = ["127.0.0.1", "10.0.0.5"]

    @Test func anUntrustedPeersHeadersAreIgnored() {
        #expect(ForwardedClient.address(peer: "203.0.113.9", forwarded: "for=1.2.3.4", xForwardedFor: "5.6.7.8", trusted: proxies) == "203.0.113.9")
        #expect(ForwardedClient.address(peer: "203.0.113.9", forwarded: nil, xForwardedFor: nil, trusted: []) == "203.0.113.9")
    }

    @Test func behindATrustedProxyTheNearestUntrustedAddressCounts() {
        // A client that writes its own X-Forwarded-For gets it kept on the left: what the proxy appended is believed.
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: nil, xForwardedFor: "6.6.6.6, 198.51.100.7", trusted: proxies) == "198.51.100.7")
        // Two proxies in a row, both trusted.
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: nil, xForwardedFor: "198.51.100.7, 10.0.0.5", trusted: proxies) == "198.51.100.7")
        // RFC 7239, quoted IPv6 with a port, and an IPv4 with a port.
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: #"for="[2001:db8::1]:4711";proto=https"#, xForwardedFor: nil, trusted: proxies) == "2001:db8::1")
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: "for=192.0.2.60:8080, for=10.0.0.5", xForwardedFor: "9.9.9.9", trusted: proxies) == "192.0.2.60")
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: nil, xForwardedFor: " 2001:db8::2 ", trusted: proxies) == "2001:db8::2")
    }

    @Test func onlyAnAddressNamesATrustedProxy() {
        #expect(["127.0.0.1", "10.0.0.5", "::1", "2001:db8::1"].allSatisfy(RelayConfiguration.isProxyAddress))
        #expect(!["localhost", "10.0.0.0/8", "127.0.0.1:80", "", "proxy.example.org"].contains(where: RelayConfiguration.isProxyAddress))
    }

    @Test func aTrustedProxyThatNamesNoClientCountsAsNone() {
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: nil, xForwardedFor: nil, trusted: proxies) == nil)
        #expect(ForwardedClient.address(peer: "127.0.0.1", forwarded: nil, xForwardedFor: "10.0.0.5, ,", trusted: proxies) == nil)
    }
}

/// The per-address cap behind a proxy the relay trusts: WebSockets count as from the client it forwards.
@Suite(.watchdog()) struct TrustedProxyCapTests {
    static func open(_ relay: RunningRelay, forwardedFor client: String) async throws -> RawSocket {
        let socket = try RawSocket(port: relay.port, timeout: 10)
        let status = await socket.upgradeToWebSocket(headers: "X-Forwarded-For: \(client)\r\n")
        #expect(status.contains("101"), "\(status)")
        return socket
    }

    @Test func aForwardedClientMeetsTheCapAndOthersThroughTheSameProxyDoNot() async throws {
        let relay = try await RunningRelay {
            $0.trustedProxies = ["127.0.0.1"]
            $0.maximumConnectionsPerAddress = 2
        }
        let first = try await Self.open(relay, forwardedFor: "198.51.100.7")
        let second = try await Self.open(relay, forwardedFor: "6.6.6.6, 198.51.100.7")
        let third = try await Self.open(relay, forwardedFor: "198.51.100.7")
        // The third from that client is closed with 1013 (try again later); another client through the proxy is not.
        let code = await third.receiveCloseCode()
        #expect(code == 1013)
        let other = try await Self.open(relay, forwardedFor: "198.51.100.8")
        let otherClosed = await other.isClosedByPeer(within: 0.5)
        let firstClosed = await first.isClosedByPeer(within: 0.1)
        let secondClosed = await second.isClosedByPeer(within: 0.1)
        #expect(!otherClosed && !firstClosed && !secondClosed)
        #expect(relay.server.metrics.value(.connectionsPerAddress) == 1)
    }

    @Test func anUntrustedPeerCannotClaimAnotherAddress() async throws {
        let relay = try await RunningRelay { $0.maximumConnectionsPerAddress = 1 }
        // Loopback has no per-address cap, and the header of a peer not trusted changes nothing.
        let sockets = [try await Self.open(relay, forwardedFor: "198.51.100.7"), try await Self.open(relay, forwardedFor: "198.51.100.7")]
        for socket in sockets {
            let closed = await socket.isClosedByPeer(within: 0.3)
            #expect(!closed)
        }
        #expect(relay.server.metrics.value(.connectionsPerAddress) == 0)
    }
}
