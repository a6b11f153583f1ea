import Foundation
import ScreenMedia
import ScreenRelay
import ScreenTesting
import ScreenSession
import ScreenTransport
import ScreenTransportClient
import ScreenWire
import Testing

/// The reverse-proxy recipe in use: real nginx terminates TLS in front of a real screenrelay, screenpub shares
/// to it over https with a private CA, and a real headless Chromium watches the viewer link over https from
/// a name that is not loopback (where only a secure page gets WebCodecs).
@Suite(.watchdog()) struct ReverseProxyTests {
    static let packaging = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging").path

    struct Watching: Decodable {
        var framesDecoded: Int
        var lastMetadata: String?
        var secure: Bool
        var protocolName: String
    }

    /// What the viewer page in `browser` shows once it has decoded a frame with `metadata` (or after a minute).
    static func watch(_ browser: HeadlessBrowser, until metadata: String) async throws -> Watching {
        let expression = """
            typeof screenViewer === 'undefined' ? null : ({ framesDecoded: screenViewer.framesDecoded,
              lastMetadata: screenViewer.lastMetadata, secure: window.isSecureContext, protocolName: location.protocol })
            """
        var state: Watching?
        let deadline = Date().addingTimeInterval(60)
        let reloaded = Locked(false)
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            // (A page being loaded again has no context to evaluate in for a moment.)
            state = try? await browser.evaluate(expression)
            if state == nil { await browser.reloadOnceIfItsScriptFailedToLoad(reloaded) }
        } while !(state.map { $0.framesDecoded > 0 && $0.lastMetadata == metadata } ?? false) && Date() < deadline
        guard let state else {
            let report = await browser.loadReport()
            return try #require(state, "the viewer's script never ran: \(report)")
        }
        return state
    }

    @Test
    func aViewerWatchesThroughNginxOverHTTPS() async throws {
        guard FileManager.default.isExecutableFile(atPath: RunningNginx.executable) else {
            Issue.record("nginx is not installed: scripts/install-deps.sh installs nginx-light")
            return
        }
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue(for: ["relay.test", "localhost", "127.0.0.1"])
        // The name the proxy is reached by: the recipes give it as --public-url; these tests, whose links name the
        // Host each client used, as --allowed-host (any other Host is refused).
        let relay = try await RunningRelayProcess(["--allowed-host", "relay.test"])
        let nginx = try await RunningNginx(
            recipe: Self.packaging + "/examples/nginx-screenrelay.conf", relayPort: relay.port, names: ["relay.test", "localhost"],
            certificate: issued.certificate, key: issued.key)

        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        _ = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 180), color: XPainter.pixel(red: 220, green: 40, blue: 40))
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENRELAY_SECRET"] = RunningRelayProcess.secret
        let share = try ChildProcess(
            RunningShare.screenpub,
            [
                "--display", display.name, "--server", "https://localhost:\(nginx.port)", "--ca-file", authority.certificate,
                "--metadata", "through nginx", "--duration", "90", "--no-cursor", "--control-socket", "",
            ],
            environment: environment)
        defer { share.endInBackground(signal: SIGTERM, timeout: 20) }
        var viewerURL: String?
        for _ in 0..<400 where viewerURL == nil {
            try await Task.sleep(for: .milliseconds(50))
            viewerURL = share.outputSoFar.split(separator: "\n").first { $0.hasPrefix("viewer:") }
                .map { $0.dropFirst(7).trimmingCharacters(in: .whitespaces) }
        }
        let link = try #require(viewerURL, "screenpub printed no viewer link: \(share.errorsSoFar)")
        // The link is the one viewers use: the proxy's https address, as screenpub reached it.
        #expect(link.hasPrefix("https://localhost:\(nginx.port)/view/"))

        // The viewer on "another machine": a name that resolves to the proxy, trusted by its key.
        let remote = link.replacingOccurrences(of: "https://localhost:", with: "https://relay.test:")
        let browser = try await HeadlessBrowser(
            url: remote,
            arguments: [
                "--host-resolver-rules=MAP relay.test 127.0.0.1", "--ignore-certificate-errors-spki-list=\(issued.publicKeyHash)",
            ])
        defer { browser.close() }
        let watched: Watching
        do {
            watched = try await Self.watch(browser, until: "through nginx")
        } catch {
            // (Seen once with every test at once: two of the viewer's modules fetched with status 0, the others 200.)
            let log = (try? String(contentsOfFile: nginx.directory + "/logs/error.log", encoding: .utf8)) ?? "none"
            Issue.record("nginx's error log: \(log.suffix(2000)); the relay: \(relay.process.errorsSoFar.suffix(1000))")
            throw error
        }
        #expect(watched.protocolName == "https:" && watched.secure)
        #expect(watched.framesDecoded > 0, "the viewer decoded nothing through nginx: \(watched); screenpub: \(share.errorsSoFar.suffix(800))")
        #expect(watched.lastMetadata == "through nginx")
    }
}

/// The Caddy recipe in use: a session made through it over https, and a client welcomed over wss through it.
@Suite(.watchdog()) struct CaddyRecipeTests {
    @Test
    func aSessionIsMadeAndJoinedThroughCaddy() async throws {
        guard FileManager.default.isExecutableFile(atPath: RunningCaddy.executable) else {
            Issue.record("caddy is not installed: scripts/install-deps.sh installs it")
            return
        }
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue(for: ["localhost"])
        // The name the proxy is reached by: the recipes give it as --public-url; these tests, whose links name the
        // Host each client used, as --allowed-host (any other Host is refused).
        let relay = try await RunningRelayProcess(["--allowed-host", "relay.test"])
        let caddy = try await RunningCaddy(
            recipe: ReverseProxyTests.packaging + "/examples/Caddyfile", relayPort: relay.port, certificate: issued.certificate, key: issued.key)
        let trust = ClientTrust(caFile: authority.certificate)
        let made = try await RelayHTTPClient(trust: trust).send("POST", "https://localhost:\(caddy.port)/session", bearer: RunningRelayProcess.secret)
        #expect(made.status == 200, "\(String(decoding: made.body, as: UTF8.self)) caddy: \(caddy.process.errorsSoFar.suffix(1000))")
        let session = try JSONDecoder().decode(SessionCredentials.self, from: made.body)
        // Links name the proxy's https address (Caddy passes Host and X-Forwarded-Proto on).
        #expect(session.relayURL == "wss://localhost:\(caddy.port)/ws")
        #expect(session.viewerURL.hasPrefix("https://localhost:\(caddy.port)/view/"))
        let welcomed = try await RelayClient.connect(
            transport: WebSocketTransport(url: session.relayURL, trust: trust), token: session.token, logger: .init(label: "caddy-test")
        ) { _, events -> String? in
            if case .welcome(_, let sessionId, _, _, _, _)? = try await events.nextControl() { return sessionId }
            return nil
        }
        #expect(welcomed == session.sessionId)
    }
}

/// The relay inside screenpub serving HTTPS itself on all addresses: the viewer link it prints names this
/// machine's network address (never 0.0.0.0), and a browser watches through it.
@Suite(.watchdog()) struct EmbeddedHTTPSRelayTests {
    @Test
    func theLinkScreenpubPrintsWorksFromTheNetwork() async throws {
        guard let address = ReachableAddress.networkAddress() else {
            try Test.cancel("this machine has no network address besides loopback: there is nothing to reach it from the network by")
        }
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue(for: [address, "localhost"])
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        _ = painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 180), color: XPainter.pixel(red: 40, green: 40, blue: 220))
        let port = try freeLoopbackPort()
        let share = try await RunningShare(
            ["--display", display.name, "--metadata", "served over https", "--no-cursor", "--host", "0.0.0.0", "--tls-cert", issued.certificate,
             "--tls-key", issued.key],
            port: port)
        #expect(share.viewerURL.hasPrefix("https://\(address):\(port)/view/"), "printed: \(share.viewerURL)")
        let browser = try await HeadlessBrowser(url: share.viewerURL, arguments: ["--ignore-certificate-errors-spki-list=\(issued.publicKeyHash)"])
        defer { browser.close() }
        let watched = try await ReverseProxyTests.watch(browser, until: "served over https")
        #expect(watched.protocolName == "https:" && watched.secure)
        #expect(watched.framesDecoded > 0 && watched.lastMetadata == "served over https", "\(watched)")
    }
}

/// `screenrelay --tls-cert --tls-key` and `kill -HUP`: the renewed certificate serves the next connections.
@Suite(.watchdog()) struct RelayCertificateReloadTests {
    @Test
    func sighupServesTheRenewedCertificate() async throws {
        let first = try await TestCertificateAuthority(name: "first CA")
        let second = try await TestCertificateAuthority(name: "second CA")
        let directory = first.directory
        let (certificate, key) = (directory + "/relay.pem", directory + "/relay.key")
        let old = try await first.issue()
        try FileManager.default.copyItem(atPath: old.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: old.key, toPath: key)
        let relay = try await RunningRelayProcess(["--tls-cert", certificate, "--tls-key", key])
        let url = "https://localhost:\(relay.port)/healthz"
        #expect(try await RelayHTTPClient(trust: ClientTrust(caFile: first.certificate)).send("GET", url).status == 200)

        let renewed = try await second.issue()
        for (from, to) in [(renewed.certificate, certificate), (renewed.key, key)] {
            try FileManager.default.removeItem(atPath: to)
            try FileManager.default.copyItem(atPath: from, toPath: to)
        }
        relay.process.signal(SIGHUP)
        #expect(try await eventually(20) { relay.process.errorsSoFar.contains("TLS certificate reloaded from \(certificate)") })
        #expect(try await RelayHTTPClient(trust: ClientTrust(caFile: second.certificate)).send("GET", url).status == 200)
        // A broken renewal is logged and the working certificate stays.
        try "garbage".write(toFile: certificate, atomically: true, encoding: .utf8)
        relay.process.signal(SIGHUP)
        #expect(try await eventually(20) { relay.process.errorsSoFar.contains("the TLS certificate stays as it was") })
        #expect(try await RelayHTTPClient(trust: ClientTrust(caFile: second.certificate)).send("GET", url).status == 200)
    }
}

/// `screenrelay --hls-dir`: the files nginx serves with packaging/examples/nginx-hls.conf, played from nginx's
/// URL, and a window that slides on disk too.
@Suite(.watchdog()) struct HLSDirectoryTests {
    @Test
    func nginxServesTheHLSTheRelayWritesAndOldSegmentsGo() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("www-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let relay = try await RunningRelayProcess(["--hls-dir", root + "/hls", "--hls-segment", "0.5"])
        let nginx = try await RunningNginx(recipe: ReverseProxyTests.packaging + "/examples/nginx-hls.conf") { port in [
            ("    listen 80;", "    listen 127.0.0.1:\(port);"), ("    listen [::]:80;\n", ""), ("root /var/www;", "root \(root);"),
        ] }
        let display = try await VirtualDisplay(width: 320, height: 240)
        let (share, session) = try await relay.share(display)
        defer { share.endInBackground(signal: SIGTERM, timeout: 20) }
        let directory = "\(root)/hls/\(session)"

        // Nobody asked: the relay writes it from the first frame. Played from nginx, not from the relay.
        #expect(try await eventually(30) { FileManager.default.fileExists(atPath: directory + "/index.m3u8") }, "\(relay.process.errorsSoFar)")
        let url = "http://127.0.0.1:\(nginx.port)/hls/\(session)/index.m3u8"
        let playlist = try await RelayHTTPClient().send("GET", url)
        #expect(playlist.status == 200 && String(decoding: playlist.body, as: UTF8.self).contains("CODECS=\"av01."))
        let decoded = try await ChildProcess.run("/usr/bin/ffmpeg", ["-v", "error", "-i", url, "-frames:v", "5", "-f", "null", "-"], timeout: 60)
        #expect(decoded.status == 0, "\(decoded.standardError)")

        // The window slides on disk: the first segments go, the directory does not grow.
        #expect(try await eventually(60) { !FileManager.default.fileExists(atPath: directory + "/seg-0.m4s") }, "\((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])")
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".m4s") }
        // 26 listed (two past the delta playlists' 12 s skip boundary, at 0.5 s) and as many retired, and one being written.
        #expect(segments.count <= 2 * 26 + 1, "\(segments.sorted())")
        let media = try String(contentsOfFile: directory + "/stream.m3u8", encoding: .utf8)
        for name in media.split(separator: "\n").filter({ $0.hasPrefix("seg-") }) {
            #expect(segments.contains(String(name)), "\(name) is listed and on disk")
        }
    }
}

/// `screenrelay --hls-push`: a real nginx with WebDAV (packaging/examples/nginx-hls-origin.conf) receives the
/// files, serves them to a player, and loses the old segments to the relay's DELETEs.
@Suite(.watchdog()) struct HLSPushTests {
    @Test
    func anOriginReceivesTheHLSAndOldSegmentsAreDeleted() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/hls", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let nginx = try await RunningNginx(recipe: ReverseProxyTests.packaging + "/examples/nginx-hls-origin.conf") { port in [
            ("    listen 8081;", "    listen 127.0.0.1:\(port);"), ("    listen [::]:8081;\n", ""), ("root /var/www;", "root \(root);"),
        ] }
        let relay = try await RunningRelayProcess(["--hls-push", "http://127.0.0.1:\(nginx.port)/hls", "--hls-segment", "0.5"])
        let display = try await VirtualDisplay(width: 320, height: 240)
        let (share, session) = try await relay.share(display)
        defer { share.endInBackground(signal: SIGTERM, timeout: 20) }
        let directory = "\(root)/hls/\(session)"
        #expect(try await eventually(30) { FileManager.default.fileExists(atPath: directory + "/index.m3u8") }, "\(relay.process.errorsSoFar)")
        let decoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-i", "http://127.0.0.1:\(nginx.port)/hls/\(session)/index.m3u8", "-frames:v", "5", "-f", "null", "-"],
            timeout: 60)
        #expect(decoded.status == 0, "\(decoded.standardError)")
        #expect(try await eventually(60) { !FileManager.default.fileExists(atPath: directory + "/seg-0.m4s") }, "\(relay.process.errorsSoFar)")
        let media = try String(contentsOfFile: directory + "/stream.m3u8", encoding: .utf8)
        let onDisk = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        for name in media.split(separator: "\n").filter({ $0.hasPrefix("seg-") }) {
            #expect(onDisk.contains(String(name)), "\(name) is listed and at the origin")
        }
        #expect(!relay.process.errorsSoFar.contains("HLS to"), "\(relay.process.errorsSoFar)")
    }
}
