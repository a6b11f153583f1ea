import Foundation
import ScreenMedia
import ScreenTesting
import Testing

/// The README's commands for sound, control of a running share and privacy masks, as written: each share
/// runs with its embedded relay (on a free port, through `SCREENPUB_PORT`, the configuration layer a reader
/// could use too) and is watched by screensub, whose recording is decoded and checked.
@Suite(.watchdog()) struct ReadmeShareTests {
    /// What a subscriber of `share` records (a WebM of `frames` frames) once it printed its viewer link.
    static func recorded(_ shell: ReadmeShell, _ share: ChildProcess, frames: Int = 15, name: String) async throws -> String {
        let viewer = try #require(try await shell.printed(share, "viewer:"), "\(share.errorsSoFar)")
        let url = try #require(URL(string: viewer))
        let (host, port) = (try #require(url.host), try #require(url.port))
        let path = shell.path(name)
        let subscriber = try ChildProcess(
            RunningShare.screensub,
            ["--server", "http://\(host):\(port)", "--token", String(viewer.split(separator: "token=").last ?? ""), "--output", path, "--count", String(frames)])
        let outcome = await subscriber.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.standardError) \(share.errorsSoFar)")
        return path
    }

    /// The strongest frequency of a recording's sound after its first half second, over up to 2 s (a source that
    /// started late on a loaded machine left the half second after that silent once, which read as 200 Hz, the
    /// band's floor).
    static func frequency(_ path: String) async throws -> Double {
        guard let samples = try? await RecordedSound.monoSamples(of: path) else { return 0 }
        return AudioShareTests.dominantFrequency(Array(samples.dropFirst(24_000).prefix(96_000)), low: 200, high: 1200)
    }

    static func stop(_ process: ChildProcess) async -> Int32 {
        process.signal(SIGTERM)
        return await process.wait(timeout: 30).status
    }

    /// A sound card cannot exist here: its output is a null sink of the README's name (the same kind of node,
    /// an Audio/Sink with a monitor), made the default by wireplumber as the only one, with a player in it; the
    /// microphone is a test source, the default input.
    @Test func sound() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let sink = "alsa_output.pci-0000_00_1f.3.analog-stereo"
        try await pipewire.addNullSink(named: sink)
        let player = try await pipewire.playTone(frequency: 660, into: sink)
        defer { player.signal(SIGKILL) }
        let microphone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-microphone", signal: .tone(frequency: 440, amplitude: 0.5))
        try await microphone.waitUntilListed(on: pipewire)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let shell = try ReadmeShell(
            .sound, display: display,
            environment: ["PIPEWIRE_RUNTIME_DIR": pipewire.runtimeDirectory, "SCREENPUB_PORT": "0", "SCREENPUB_FPS": "10", "SCREENPUB_KEEPALIVE": "0.2"])

        let desktop = try shell.start("screenpub --audio desktop")
        let heard = try await Self.frequency(try await Self.recorded(shell, desktop, frames: 30, name: "desktop.webm"))
        #expect(abs(heard - 660) < 13, "the desktop's sound: \(heard) Hz; \(desktop.errorsSoFar)")
        let toggled = try await shell.run("screenpub mute ; screenpub unmute")
        #expect(toggled.standardOutput == "screenpub's sound is muted\nscreenpub's sound is on\n", "\(toggled.standardOutput) \(toggled.standardError)")
        #expect(await Self.stop(desktop) == 0)

        let mic = try shell.start("screenpub --audio mic --audio-bitrate 32")
        let micHeard = try await Self.frequency(try await Self.recorded(shell, mic, frames: 30, name: "mic.webm"))
        #expect(abs(micHeard - 440) < 9, "the microphone: \(micHeard) Hz; \(mic.errorsSoFar)")
        #expect(await Self.stop(mic) == 0)

        let card = try shell.start("screenpub --audio alsa_output.pci-0000_00_1f.3.analog-stereo")
        let cardHeard = try await Self.frequency(try await Self.recorded(shell, card, frames: 30, name: "card.webm"))
        #expect(abs(cardHeard - 660) < 13, "the output by node.name: \(cardHeard) Hz; \(card.errorsSoFar)")
        #expect(await Self.stop(card) == 0)

        // Without PipeWire: the screen alone, said so.
        shell.environment["PIPEWIRE_RUNTIME_DIR"] = shell.home
        let optional = try shell.start("screenpub --audio desktop --audio-optional")
        let pictures = try Pictures.measured(try await Self.recorded(shell, optional, frames: 5, name: "optional.webm")) { $0.width }
        #expect(pictures.count == 5 && optional.errorsSoFar.contains("sharing the screen without sound"), "\(optional.errorsSoFar)")
        #expect(await Self.stop(optional) == 0)
        shell.expectAllRun()
    }

    @Test func control() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-test-control", signal: .tone(frequency: 440, amplitude: 0.5))
        try await tone.waitUntilListed(on: pipewire)
        let display = try await VirtualDisplay(width: 320, height: 240)
        let shell = try ReadmeShell(.control, display: display, environment: ["PIPEWIRE_RUNTIME_DIR": pipewire.runtimeDirectory])
        let share = try ChildProcess(RunningShare.screenpub, ["--port", "0", "--audio", tone.name], environment: shell.environment)
        defer { share.signal(SIGKILL) }
        _ = try #require(try await shell.printed(share, "viewer:"), "\(share.errorsSoFar)")
        var outcome = try await shell.run("screenpub status")
        #expect(outcome.status == 0 && outcome.standardOutput.contains("state:   sharing") && outcome.standardOutput.contains("screenpub-test-control"), "\(outcome.standardOutput)")
        func state() async throws -> [String: Any] {
            let json = try await shell.run("screenpub status --json")
            return ReadmeRelayTests.object(json.standardOutput)
        }
        #expect(try await state()["state"] as? String == "sharing")
        for (command, said, key, value) in [
            ("screenpub pause", "screenpub is paused", "state", "paused"), ("screenpub resume", "screenpub is sharing", "state", "sharing"),
            ("screenpub mute", "screenpub's sound is muted", "muted", "1"), ("screenpub unmute", "screenpub's sound is on", "muted", "0"),
        ] {
            outcome = try await shell.run(command)
            let now = try await state()
            #expect(outcome.standardOutput == said + "\n" && "\(now[key] ?? "")" == value, "\(command): \(outcome.standardOutput) \(now)")
        }
        outcome = try await shell.run("screenpub stop")
        #expect(outcome.status == 0 && outcome.standardOutput == "screenpub stopped\n", "\(outcome.standardOutput) \(outcome.standardError)")
        // `stop` returns once the control socket is gone; the process exits right after.
        #expect(await share.wait(timeout: 10).status == 0)
        shell.expectAllRun()
    }

    @Test func masks() async throws {
        let display = try await VirtualDisplay(width: 1920, height: 1080)
        let painter = try XPainter(displayName: display.name)
        let hidden: [(r: UInt8, g: UInt8, b: UInt8)] = [(255, 0, 255), (0, 255, 255), (255, 255, 0)]
        for (index, (instance, className, title)) in [("keepassxc", "KeePassXC", "Passwords"), ("bitwarden", "Bitwarden", "Vault | Bitwarden"), ("1password", "1Password", "1Password")].enumerated() {
            let color = hidden[index]
            painter.createApplicationWindow(
                PixelRect(x: 100 + index * 400, y: 300, width: 300, height: 200), color: XPainter.pixel(red: color.r, green: color.g, blue: color.b),
                instance: instance, class: className, title: title)
        }
        let shown = (r: UInt8(0), g: UInt8(160), b: UInt8(0))
        painter.createApplicationWindow(PixelRect(x: 100, y: 700, width: 300, height: 200), color: XPainter.pixel(red: 0, green: 160, blue: 0), instance: "gedit", class: "Gedit", title: "notes")
        // Stripes of red and blue across the top right corner, the notifications' place.
        let corner = painter.createWindow(PixelRect(x: 1500, y: 0, width: 420, height: 60), color: XPainter.pixel(red: 0, green: 0, blue: 255))
        for x in stride(from: 0, to: 420, by: 8) {
            painter.fill(window: corner, PixelRect(x: x, y: 0, width: 4, height: 60), color: XPainter.pixel(red: 255, green: 0, blue: 0))
        }
        let shell = try ReadmeShell(.masks, display: display, environment: ["SCREENPUB_PORT": "0", "SCREENPUB_FPS": "10", "SCREENPUB_KEEPALIVE": "0.2"])

        let windows = try shell.start("screenpub --mask-window KeePassXC --mask-window '*Bitwarden*' --mask-window 1Password")
        let looks = try Pictures.measured(try await ReadmeShareTests.recorded(shell, windows, frames: 5, name: "windows.webm")) { picture in
            hidden.map { TestPattern.shows(picture, $0, tolerance: 30) } + [TestPattern.difference(picture, x: 250, y: 800, shown) <= 24]
        }
        #expect(looks.count == 5 && looks.allSatisfy { $0 == [false, false, false, true] }, "\(looks)")
        #expect(await Self.stop(windows) == 0)

        let red = (r: UInt8(255), g: UInt8(0), b: UInt8(0))
        let region = try shell.start("screenpub --mask-region 1600,0,320,60 --mask-style pixelate")
        let corners = try Pictures.measured(try await ReadmeShareTests.recorded(shell, region, frames: 5, name: "region.webm")) { picture in
            let outside = (1500..<1600).contains { TestPattern.difference(picture, x: $0, y: 30, red) <= 40 }
            let inside = (1600..<1920).contains { TestPattern.difference(picture, x: $0, y: 5, red) <= 40 }
            return "stripes outside \(outside), inside \(inside)"
        }
        #expect(corners.count == 5 && corners.allSatisfy { $0 == "stripes outside true, inside false" }, "\(corners)")
        #expect(await Self.stop(region) == 0)
        shell.expectAllRun()
    }
}

extension ReadmeShareTests {
    /// The certificate files of the README are made by a test CA (nothing here can get one from a public CA):
    /// so the command that trusts only the system's CAs must refuse the relay, and those given `--ca-file` must
    /// reach it. Host names of other machines are `localhost` here.
    @Test func tls() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let authority = try await TestCertificateAuthority()
        let issued = try await authority.issue(for: ["localhost", "127.0.0.1"])
        let shell = try ReadmeShell(
            .tls, display: display,
            environment: ["SCREENRELAY_SECRET": ReadmeRelayTests.secret, "SCREENPUB_CONTROL_SOCKET": "", "SCREENPUB_FPS": "10", "SCREENPUB_KEEPALIVE": "0.2"])
        func healthy(_ port: Int) async throws -> Bool {
            let answer = try await ChildProcess.run("/usr/bin/curl", ["-s", "--cacert", authority.certificate, "https://127.0.0.1:\(port)/healthz"])
            return answer.standardOutput.hasPrefix("ok")
        }

        let embedded = try freeLoopbackPort()
        shell.substitutions = [("8443", String(embedded)), ("/etc/ssl/screen.pem", issued.certificate), ("/etc/ssl/screen.key", issued.key)]
        let share = try shell.start("screenpub --host 0.0.0.0 --port 8443 --tls-cert /etc/ssl/screen.pem --tls-key /etc/ssl/screen.key")
        let link = try #require(try await shell.printed(share, "viewer:"), "\(share.errorsSoFar)")
        #expect(link.hasPrefix("https://") && !link.contains("0.0.0.0") && link.contains(":\(embedded)/view/"), "\(link)")
        #expect(try await healthy(embedded), "\(share.errorsSoFar)")

        let port = try freeLoopbackPort()
        for (from, to) in [(issued.certificate, "fullchain.pem"), (issued.key, "privkey.pem"), (authority.certificate, "my-ca.pem")] {
            try FileManager.default.copyItem(atPath: from, toPath: shell.path(to))
        }
        shell.substitutions = [("8443", String(port))]
        let relay = try shell.start("screenrelay --host 0.0.0.0 --port 8443 --tls-cert fullchain.pem --tls-key privkey.pem")
        #expect(try await eventually(20) { relay.errorsSoFar.contains("listening on port \(port)") }, "\(relay.errorsSoFar)")
        #expect(try await healthy(port))
        relay.signal(SIGHUP)
        #expect(try await eventually(30) { relay.errorsSoFar.contains("SIGHUP: reading the TLS certificate again") }, "\(relay.errorsSoFar)")
        #expect(try await healthy(port))

        shell.substitutions = [("screen.example.org", "localhost:\(port)")]
        let refused = try await shell.run("screenpub --server https://screen.example.org", timeout: 60)
        #expect(refused.status != 0 && refused.standardError.contains("certificate"), "\(refused.standardError)")

        shell.substitutions = [("relay.lan:8443", "localhost:\(port)")]
        let trusted = try shell.start("screenpub --server https://relay.lan:8443 --ca-file my-ca.pem")
        let viewer = try #require(try await shell.printed(trusted, "viewer:"), "\(trusted.errorsSoFar)")
        #expect(viewer.hasPrefix("https://localhost:\(port)/view/"), "\(viewer)")
        shell.substitutions.append(("…", String(viewer.split(separator: "token=").last ?? "")))
        let watcher = try shell.start("screensub --server https://relay.lan:8443 --ca-file my-ca.pem --token …")
        #expect(try await eventually(20) { watcher.outputSoFar.contains("screen 320×240") }, "\(watcher.outputSoFar) \(watcher.errorsSoFar)")
        try await Task.sleep(for: .seconds(1))
        watcher.signal(SIGINT)
        let watched = await watcher.wait(timeout: 20)
        let received = watched.standardOutput.split(separator: "\n").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        #expect(received >= 3 && watched.standardOutput.contains("decoded"), "\(watched.standardOutput) \(watched.standardError)")
        shell.expectAllRun()
    }
}

extension ReadmeShareTests {
    /// Whether `display` shows `color` somewhere (a grab with ffmpeg's x11grab, as a person would look).
    static func screenShows(_ display: VirtualDisplay, _ color: (r: UInt8, g: UInt8, b: UInt8)) async throws -> Bool {
        let grab = try await ChildProcess.run(
            "/bin/bash", ["-c", "ffmpeg -v error -f x11grab -video_size \(display.width)x\(display.height) -i \(display.name) -frames:v 1 -f rawvideo -pix_fmt rgb24 - | od -An -v -tu1 -w3"],
            timeout: 30)
        return grab.standardOutput.split(separator: "\n").contains { line in
            let value = line.split(separator: " ").compactMap { Int($0) }
            return value.count == 3 && abs(value[0] - Int(color.r)) < 30 && abs(value[1] - Int(color.g)) < 30 && abs(value[2] - Int(color.b)) < 30
        }
    }

    @Test func hls() async throws {
        let shared = try await VirtualDisplay(width: 320, height: 240)
        let painter = try XPainter(displayName: shared.name)
        let magenta = (r: UInt8(200), g: UInt8(40), b: UInt8(160))
        painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: magenta.r, green: magenta.g, blue: magenta.b))
        let watching = try await VirtualDisplay(width: 640, height: 480)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(
            .hls, display: watching,
            environment: ["SCREENRELAY_SECRET": ReadmeRelayTests.secret, "SCREENRELAY_PORT": String(port), "SCREENRELAY_HLS_SEGMENT": "1", "SDL_AUDIODRIVER": "dummy"])
        shell.substitutions = [("/var/www/hls", shell.path("hls"))]
        let relay = try shell.start("screenrelay --hls-dir /var/www/hls")
        #expect(try await eventually(20) { relay.errorsSoFar.contains("listening on port \(port)") }, "\(relay.errorsSoFar)")
        let publisher = try ChildProcess(
            RunningShare.screenpub, ["--server", "http://127.0.0.1:\(port)", "--display", shared.name, "--fps", "10", "--keepalive", "0.2", "--control-socket", ""],
            environment: shell.environment)
        defer { publisher.signal(SIGKILL) }
        let session = try #require(try await shell.printed(publisher, "session:"), "\(publisher.errorsSoFar)")
        #expect(try await eventually(30) { FileManager.default.fileExists(atPath: shell.path("hls/\(session)/index.m3u8")) }, "\(relay.errorsSoFar)")
        let viewer = try await ReadmeRelayTests.token(shell, port: port, session: session, role: "subscriber")
        shell.substitutions += [("8090", String(port)), ("<sessionId>", session), ("<viewer token>", viewer)]
        shell.environment["auth"] = "Authorization: Bearer \(ReadmeRelayTests.secret)"  // as the archives section set it

        let player = try shell.start("ffplay \"http://127.0.0.1:8090/hls/<sessionId>/index.m3u8?token=<viewer token>\"")
        #expect(try await eventually(40) { (try? await Self.screenShows(watching, magenta)) == true }, "ffplay shows nothing: \(player.errorsSoFar.suffix(600))")
        player.signal(SIGKILL)

        let reader = try shell.start("screensub --hls \"http://127.0.0.1:8090/hls/<sessionId>/index.m3u8?token=<viewer token>\" --print-metadata")
        #expect(try await eventually(30) { reader.outputSoFar.contains("segment") && reader.outputSoFar.contains("frame t=") }, "\(reader.outputSoFar) \(reader.errorsSoFar)")
        let marked = try await shell.run(#"curl -s -X POST -H "$auth" -d '{"id":"chapter-2","attributes":{"X-TITLE":"Q&A"}}' http://127.0.0.1:8090/session/<sessionId>/marker"#)
        #expect(marked.status == 0, "\(marked.standardOutput)")
        #expect(try await eventually(30) { reader.outputSoFar.contains("daterange chapter-2") }, "\(reader.outputSoFar.suffix(800))")
        shell.expectAllRunExcept(["screenrelay --hls-push http://127.0.0.1:8081/hls"])
    }

    @Test func hlsPushedToAnOrigin() async throws {
        let display = try await VirtualDisplay(width: 320, height: 240)
        let port = try freeLoopbackPort()
        let shell = try ReadmeShell(
            .hls, display: display, environment: ["SCREENRELAY_SECRET": ReadmeRelayTests.secret, "SCREENRELAY_PORT": String(port), "SCREENRELAY_HLS_SEGMENT": "1"])
        let root = shell.path("www")
        try FileManager.default.createDirectory(atPath: root + "/hls", withIntermediateDirectories: true)
        let nginx = try await RunningNginx(recipe: ReverseProxyTests.packaging + "/examples/nginx-hls-origin.conf") { port in [
            ("    listen 8081;", "    listen 127.0.0.1:\(port);"), ("    listen [::]:8081;\n", ""), ("root /var/www;", "root \(root);"),
        ] }
        shell.substitutions = [("127.0.0.1:8081", "127.0.0.1:\(nginx.port)")]
        let relay = try shell.start("screenrelay --hls-push http://127.0.0.1:8081/hls")
        #expect(try await eventually(20) { relay.errorsSoFar.contains("listening on port \(port)") }, "\(relay.errorsSoFar)")
        let publisher = try ChildProcess(
            RunningShare.screenpub, ["--server", "http://127.0.0.1:\(port)", "--fps", "10", "--keepalive", "0.2", "--control-socket", ""],
            environment: shell.environment)
        defer { publisher.signal(SIGKILL) }
        let session = try #require(try await shell.printed(publisher, "session:"), "\(publisher.errorsSoFar)")
        #expect(try await eventually(30) { FileManager.default.fileExists(atPath: "\(root)/hls/\(session)/index.m3u8") }, "\(relay.errorsSoFar)")
        let decoded = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-i", "http://127.0.0.1:\(nginx.port)/hls/\(session)/index.m3u8", "-frames:v", "5", "-f", "null", "-"], timeout: 60)
        #expect(decoded.status == 0, "\(decoded.standardError)")
    }
}

extension ReadmeShareTests {
    /// An SFU cannot be reached by its public name here: the README's endpoint is the Janus VideoRoom of the
    /// WHIP tests, in a network namespace of its own (plain http, as on a test bench); `relay.example.org` is a
    /// relay on this machine. Skipped, saying why, where namespaces cannot be made.
    @Test func whip() async throws {
        try await WHIPTests().withSFU { sfu in
            let display = try await VirtualDisplay(width: 320, height: 240)
            let painter = try XPainter(displayName: display.name)
            painter.createWindow(PixelRect(x: 0, y: 0, width: 320, height: 240), color: XPainter.pixel(red: 255, green: 0, blue: 0))
            let port = try freeLoopbackPort()
            let shell = try ReadmeShell(
                .whip, display: display,
                environment: ["WHIP_TOKEN": sfu.token, "SCREENRELAY_SECRET": ReadmeRelayTests.secret, "SCREENPUB_CONTROL_SOCKET": "", "SCREENPUB_FPS": "10"])
            shell.substitutions = [("whip+https://sfu.example.org/whip/room1", sfu.whipURL), ("https://relay.example.org", "http://127.0.0.1:\(port)")]
            let sfuOnly = try shell.start("screenpub --codec vp9 --publish whip+https://sfu.example.org/whip/room1 --whip-token \"$WHIP_TOKEN\"")
            #expect(try await eventually(30) { sfuOnly.errorsSoFar.contains("over WHIP (vp9)") }, "\(sfuOnly.errorsSoFar)")
            let pictures = try await sfu.watch(port: 5008, seconds: 3)
            #expect(!pictures.isEmpty && pictures.allSatisfy { WHIPTests.close($0, WHIPTests.red) }, "\(pictures.count) pictures through Janus")
            sfuOnly.signal(SIGTERM)
            #expect(await sfuOnly.wait(timeout: 30).status == 0)

            let relay = try await ReadmeRelayTests.relay(shell, port: port)
            defer { relay.endInBackground() }
            shell.environment["SCREENPUB_WHIP_TOKEN"] = sfu.token  // where the README says to keep it
            let both = try shell.start("screenpub --server https://relay.example.org --publish whip+https://sfu.example.org/whip/room1")
            let session = try #require(try await shell.printed(both, "session:"), "\(both.errorsSoFar)")
            #expect(try await eventually(30) { both.errorsSoFar.contains("over WHIP (vp9)") }, "\(both.errorsSoFar)")
            let viewed = try await sfu.watch(port: 5008, seconds: 3)
            #expect(!viewed.isEmpty, "nothing through Janus: \(both.errorsSoFar)")
            let subscriber = try ChildProcess(
                RunningShare.screensub,
                ["--server", "http://127.0.0.1:\(port)", "--token", try await ReadmeRelayTests.token(shell, port: port, session: session, role: "subscriber"), "--count", "2"])
            #expect(await subscriber.wait(timeout: 30).status == 0, "\(subscriber.errorsSoFar)")
            both.signal(SIGTERM)
            #expect(await both.wait(timeout: 30).status == 0)
            shell.expectAllRun()
        }
    }
}

extension ReadmeShareTests {
    /// On GNOME's mutter, headless: the portal's real dialog answered with the virtual pointer (as in
    /// MutterShareTests), then a screen cast's node given directly.
    @Test func wayland() async throws {
        let mutter = try await HeadlessDesktopFailure.startedOrSkipped("mutter") { try await HeadlessMutter(portal: true) }
        defer { mutter.stop() }
        let shell = try ReadmeShell(.wayland)
        shell.environment.merge(mutter.environment.filter { !["PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"].contains($0.key) }) { $1 }
        shell.environment.merge(["SCREENPUB_PORT": "0", "SCREENPUB_CONTROL_SOCKET": "", "SCREENPUB_KEEPALIVE": "0.2"]) { $1 }
        let share = try shell.start("screenpub --fps 5")
        #expect(try await eventually(20) { share.errorsSoFar.contains("asking the ScreenCast portal for a monitor") }, "\(share.errorsSoFar)")
        let pointer = try await mutter.screenCast(cursorMode: .hidden)
        let granted = try await pointer.answerScreenShareDialog {
            share.errorsSoFar.contains("capturing the screen cast granted by the portal") || share.hasExited
        }
        #expect(granted && share.errorsSoFar.contains("capturing the screen cast granted by the portal"), "\(share.errorsSoFar)")
        try await mutter.showTestWindow()
        let pictures = try Pictures.measured(try await Self.recorded(shell, share, frames: 3, name: "portal.webm")) { "\($0.width)x\($0.height)" }
        #expect(pictures.count == 3 && pictures.allSatisfy { $0 == "\(mutter.width)x\(mutter.height)" }, "\(pictures)")
        #expect(await Self.stop(share) == 0)

        shell.substitutions = [("57", String(pointer.nodeID))]
        let node = try shell.start("screenpub --pipewire-node 57")
        let looks = try Pictures.measured(try await Self.recorded(shell, node, frames: 3, name: "node.webm")) { MutterShareTests.look($0).windowShown }
        #expect(looks.count == 3 && looks.allSatisfy { $0 }, "\(looks) \(node.errorsSoFar)")
        #expect(await Self.stop(node) == 0)
        shell.expectAllRunExcept(["screenpub --portal-source window"])
    }

    /// Picking a window in GNOME's dialog cannot be done reliably with a virtual pointer; what the command asks
    /// the portal for is checked through the real xdg-desktop-portal frontend with the test backend in place of
    /// the desktop's, which answers with a node of its own.
    @Test func waylandWindow() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 256, height: 160, color: PipeWireShareTests.color)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), size: (256, 160))
        let shell = try ReadmeShell(.wayland)
        shell.environment.merge(pipewire.environment.filter { !["PATH", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"].contains($0.key) }) { $1 }
        shell.environment.merge(["WAYLAND_DISPLAY": "wayland-0", "SCREENPUB_PORT": "0", "SCREENPUB_CONTROL_SOCKET": "", "SCREENPUB_FPS": "10", "SCREENPUB_KEEPALIVE": "0.2"]) { $1 }
        let share = try shell.start("screenpub --portal-source window")
        let pictures = try Pictures.measured(try await Self.recorded(shell, share, frames: 3, name: "window.webm")) {
            "\($0.width)x\($0.height) \(TestPattern.difference($0, x: 128, y: 80, PipeWireShareTests.color) <= 12)"
        }
        #expect(pictures.count == 3 && pictures.allSatisfy { $0 == "256x160 true" }, "\(pictures) \(share.errorsSoFar)")
        #expect(backend.selectSourcesOptions().first?["types"] as? Int == 2, "asked for a window: \(backend.selectSourcesOptions())")
        #expect(await Self.stop(share) == 0)
    }
}
