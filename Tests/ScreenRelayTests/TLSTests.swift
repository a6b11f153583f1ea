import Foundation
import Logging
import ScreenMedia
import ScreenRelay
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// HTTPS and WSS with a CA made in the test: clients verify the relay's certificate and its name, and a
/// renewed certificate is served without dropping anyone.
@Suite(.watchdog()) struct TLSTests {
    /// A relay serving `issued`.
    private func relay(_ issued: TestCertificateAuthority.Issued) async throws -> RunningRelay {
        try await RunningRelay { $0.tls = RelayTLSFiles(certificateChain: issued.certificate, privateKey: issued.key) }
    }

    /// Says hello over `url` and returns the session the relay welcomed it to.
    private func welcome(_ url: String, token: String, trust: ClientTrust) async throws -> String {
        try await RelayClient.connect(transport: WebSocketTransport(url: url, trust: trust), token: token, logger: quietLogger) { _, events in
            guard case .welcome(_, let sessionId, _, _, _, _)? = try await events.nextControl() else { throw TestFailure("no welcome") }
            return sessionId
        }
    }

    @Test func aClientThatTrustsTheCAMakesASessionAndJoinsItOverWSS() async throws {
        let authority = try await TestCertificateAuthority()
        let relay = try await relay(try await authority.issue())
        let trust = ClientTrust(caFile: authority.certificate)
        let http = RelayHTTPClient(trust: trust)
        let response = try await http.send("POST", "https://localhost:\(relay.port)/session", bearer: RunningRelay.secret)
        #expect(response.status == 200)
        let session = try JSONDecoder().decode(SessionCredentials.self, from: response.body)
        // Links are built from the name the client used, with the secure schemes.
        #expect(session.relayURL == "wss://localhost:\(relay.port)/ws")
        #expect(session.viewerURL.hasPrefix("https://localhost:\(relay.port)/view/\(session.sessionId)?token="))
        #expect(try await welcome(session.relayURL, token: session.token, trust: trust) == session.sessionId)
        // The health check and the viewer page are served over HTTPS too.
        #expect(try await http.send("GET", "https://127.0.0.1:\(relay.port)/healthz").status == 200)
    }

    @Test func aCertificateFromAnotherCAIsRefusedWithAReason() async throws {
        let authority = try await TestCertificateAuthority()
        let stranger = try await TestCertificateAuthority(name: "someone else's CA")
        let relay = try await relay(try await authority.issue())
        let url = "https://localhost:\(relay.port)/session"
        await #expect {
            try await RelayHTTPClient(trust: ClientTrust(caFile: stranger.certificate)).send("POST", url, bearer: RunningRelay.secret)
        } throws: { error in
            "\(error)".contains("not signed by the CA in \(stranger.certificate)")
        }
        // Without a CA file the system's store is used, which does not know the test CA either.
        await #expect {
            try await RelayHTTPClient().send("POST", url, bearer: RunningRelay.secret)
        } throws: { error in
            "\(error)".contains("not signed by an authority this machine trusts (for a private CA, pass --ca-file)")
        }
        let token = try await RelayHTTPClient(trust: ClientTrust(caFile: authority.certificate)).send("POST", url, bearer: RunningRelay.secret)
        let session = try JSONDecoder().decode(SessionCredentials.self, from: token.body)
        await #expect {
            try await welcome(session.relayURL, token: session.token, trust: ClientTrust(caFile: stranger.certificate))
        } throws: { error in
            "\(error)".contains("not signed by the CA in")
        }
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        let authority = try await TestCertificateAuthority()
        let relay = try await relay(try await authority.issue(for: ["relay.example"]))
        await #expect {
            try await RelayHTTPClient(trust: ClientTrust(caFile: authority.certificate))
                .send("GET", "https://localhost:\(relay.port)/healthz")
        } throws: { error in
            "\(error)".contains("the relay's certificate is not for localhost")
        }
    }

    @Test func aRenewedCertificateServesNewClientsAndKeepsThoseConnected() async throws {
        let first = try await TestCertificateAuthority(name: "first CA")
        let second = try await TestCertificateAuthority(name: "second CA")
        let old = try await first.issue()
        // The relay reads the files it was given: renewal writes new ones in their place.
        let directory = first.directory
        let certificate = directory + "/relay.pem", key = directory + "/relay.key"
        try FileManager.default.copyItem(atPath: old.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: old.key, toPath: key)
        let relay = try await RunningRelay { $0.tls = RelayTLSFiles(certificateChain: certificate, privateKey: key) }
        let firstTrust = ClientTrust(caFile: first.certificate), secondTrust = ClientTrust(caFile: second.certificate)
        let session = try JSONDecoder().decode(
            SessionCredentials.self,
            from: try await RelayHTTPClient(trust: firstTrust).send("POST", relay.base + "/session", bearer: RunningRelay.secret).body)
        let viewerToken = try await RelayHTTPClient(trust: firstTrust).send(
            "POST", relay.base + "/session/\(session.sessionId)/token", bearer: RunningRelay.secret,
            json: Data(#"{"role":"subscriber"}"#.utf8))
        let token = try JSONDecoder().decode([String: String].self, from: viewerToken.body)["token"] ?? ""

        // A viewer connected before the renewal keeps receiving what the session sends it.
        let renewed = OneShotEvent()
        let viewer = Task {
            try await RelayClient.connect(transport: WebSocketTransport(url: "wss://localhost:\(relay.port)/ws", trust: firstTrust), token: token, logger: quietLogger) {
                link, events in
                _ = try await events.nextControl()
                await renewed.wait()
                try await link.send(.signal(Signal(type: "chat", data: "still here")))
                while let event = try await events.next() {
                    if case .control(.signal(let signal)) = event, signal.data == "still here" { return true }
                }
                return false
            }
        }
        try await relay.waitForConnections(1)
        let fresh = try await second.issue()
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: fresh.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: fresh.key, toPath: key)
        let reloaded = relay.server.reloadCertificate()
        #expect((try? reloaded.get())?.contains("TLS certificate reloaded") == true)
        renewed.signal()
        #expect(try await viewer.value)
        // New connections get the new certificate: the second CA verifies it, the first no longer does.
        #expect(try await RelayHTTPClient(trust: secondTrust).send("GET", relay.base + "/healthz").status == 200)
        await #expect(throws: RelayClientError.self) { try await RelayHTTPClient(trust: firstTrust).send("GET", relay.base + "/healthz") }
        // A renewal that cannot be read keeps the certificate in use.
        try "not a certificate".write(toFile: certificate, atomically: true, encoding: .utf8)
        #expect(throws: RelayError.self) { try relay.server.reloadCertificate().get() }
        #expect(try await RelayHTTPClient(trust: secondTrust).send("GET", relay.base + "/healthz").status == 200)
    }

    @Test func unusableCertificatesAreClearErrorsAtStart() async throws {
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue()
        let other = try await authority.issue(label: "other")
        func start(_ files: RelayTLSFiles) async -> String {
            do {
                _ = try await RelayServer(
                    configuration: { var c = RelayConfiguration(port: 0, secret: RunningRelay.secret); c.tls = files; return c }(), logger: quietLogger)
                return "started"
            } catch {
                return "\(error)"
            }
        }
        #expect(await start(.init(certificateChain: "/nonexistent.pem", privateKey: issued.key)).contains("/nonexistent.pem: no such file"))
        #expect(await start(.init(certificateChain: issued.key, privateKey: issued.key)).contains("cannot read a PEM certificate from \(issued.key)"))
        #expect(await start(.init(certificateChain: issued.certificate, privateKey: other.key)).contains("does not belong to the certificate"))
        #expect(await start(.init(certificateChain: issued.certificate, privateKey: issued.key)) == "started")
    }

    /// Only TLS 1.2 and 1.3 with forward-secret suites; plain HTTP to the TLS port is closed and counted, and
    /// the relay goes on serving.
    @Test func oldTLSAndPlainHTTPAreRefusedAtTheHandshake() async throws {
        let authority = try await TestCertificateAuthority()
        let relay = try await relay(try await authority.issue())
        func handshake(_ options: [String]) async throws -> Bool {
            let outcome = try await ChildProcess.run(
                "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(relay.port)", "-servername", "localhost"] + options, timeout: 20)
            return outcome.standardOutput.contains("Cipher is ") && !outcome.standardOutput.contains("Cipher is (NONE)")
        }
        #expect(try await handshake(["-tls1_3"]), "TLS 1.3")
        #expect(try await handshake(["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256"]), "TLS 1.2 with ECDHE")
        #expect(try await !handshake(["-tls1_2", "-cipher", "AES128-SHA"]), "a suite without forward secrecy")
        #expect(try await !handshake(["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]), "TLS 1.1")
        for _ in 0..<5 {
            let plain = try RawSocket(port: relay.port)
            await plain.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(await plain.isClosedByPeer(within: 10))
        }
        #expect(relay.server.metrics.value(.tlsHandshake) >= 5)
        let trust = ClientTrust(caFile: authority.certificate)
        #expect(try await RelayHTTPClient(trust: trust).send("GET", "https://localhost:\(relay.port)/healthz").status == 200)
    }
}
