import ScreenMedia
import ScreenRelay
import ScreenShare
import ScreenTransport
import ScreenTesting
import Testing

/// The control state machine alone: commands in, effects out.
@Suite(.watchdog()) struct ShareControlTests {
    let configuration = try! ShareConfiguration(.testing(to: ["collect:a"], fps: 5), environment: [:], destinationKinds: testKinds)

    @Test func pauseAndResumeAnnounceAndToggleOnce() {
        var control = ShareControl(configuration: configuration)
        #expect(control.handle(.pause) == [
            .setPaused(true), .announce(StreamAnnouncement(hasVideo: false, framesPerSecond: 5, hasAudio: false)),
            .log(.info, "paused: no video is sent until `screenpub resume`"), .reply(.status),
        ])
        #expect(control.state == .paused)
        #expect(control.handle(.pause) == [.reply(.status)])
        #expect(control.handle(.resume) == [
            .setPaused(false), .announce(StreamAnnouncement(hasVideo: true, framesPerSecond: 5, hasAudio: false)), .log(.info, "resumed"), .reply(.status),
        ])
        #expect(control.handle(.resume) == [.reply(.status)])
    }

    @Test func maskAddAndRemoveRestartTheCaptureWithThePatternsAndRefuseWhatCannotBe() throws {
        var control = ShareControl(configuration: configuration)
        #expect(ShareControl.Command("mask add *Bitwarden* vault") == .mask(add: true, .window("*Bitwarden* vault")))
        #expect(ShareControl.Command("mask add --window KeePassXC") == .mask(add: true, .window("KeePassXC")))
        #expect(ShareControl.Command("mask remove --region 0,0,10,10") == .mask(add: false, .region("0,0,10,10")))
        #expect(ShareControl.Command("mask") == .unknown("mask"))
        let effects = control.handle(.mask(add: true, .window("KeePassXC")))
        #expect(control.capture.source.mask.windowPatterns.map(\.text) == ["KeePassXC"])
        #expect(effects == [
            .restartCapture(control.capture), .log(.info, "windows matching \"KeePassXC\" are hidden from now on"), .reply(.status),
        ])
        #expect(control.handle(.mask(add: true, .window("KeePassXC"))) == [.reply(.status)])
        #expect(control.handle(.mask(add: false, .window("1Password"))) == [.reply(.refused("no window mask \"1Password\" (masks: KeePassXC)"))])
        #expect(control.handle(.mask(add: true, .window("*"))) == [
            .reply(.refused("window pattern \"*\" would match every window; use --mask-region to hide an area")),
        ])
        #expect(control.handle(.mask(add: false, .window("KeePassXC"))).first == .restartCapture(control.capture))
        #expect(control.capture.source.mask.windowPatterns.isEmpty)
        // Regions, the same way.
        #expect(control.handle(.mask(add: true, .region("0,0,100,50"))).first == .restartCapture(control.capture))
        #expect(control.capture.source.mask.regions == [PixelRect(x: 0, y: 0, width: 100, height: 50)])
        #expect(control.handle(.mask(add: true, .region("0,0,0,50"))) == [
            .reply(.refused("a mask region is X,Y,W,H in pixels of the captured area (e.g. 0,0,400,300), not \"0,0,0,50\"")),
        ])
        #expect(control.handle(.mask(add: false, .region("1,1,1,1"))) == [.reply(.refused("no mask region 1,1,1,1 (regions: 0,0,100,50)"))])
    }

    @Test func windowMasksAreRefusedWhileCapturingThroughPipeWireAndTheRunningMasksStay() throws {
        var settings = ShareSettings.testing(to: ["collect:a"], fps: 5)
        settings.backend = .pipewire
        settings.pipewireNode = 42
        settings.maskRegion = ["0,0,64,64"]
        var wayland = ShareControl(configuration: try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds))
        let before = wayland.capture
        guard case .reply(.refused(let message))? = wayland.handle(.mask(add: true, .window("KeePassXC"))).first else {
            Issue.record("a window mask was not refused on PipeWire")
            return
        }
        #expect(message.contains("PipeWire") && message.contains("mask add --region"), "\(message)")
        #expect(wayland.capture == before)
        // A region can be added there.
        #expect(wayland.handle(.mask(add: true, .region("100,0,64,64"))).first == .restartCapture(wayland.capture))
        #expect(wayland.capture.source.mask.regions.count == 2)
    }

    @Test func aReloadThatWouldShowSomethingHiddenNowIsRefusedWhole() throws {
        var settings = ShareSettings.testing(to: ["collect:a"], fps: 5)
        settings.maskWindow = ["KeePassXC", "*Bitwarden*"]
        settings.maskRegion = ["0,0,200,100"]
        var control = ShareControl(configuration: try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds))
        _ = control.handle(.mask(add: true, .window("Signal")))
        let running = control.capture
        func reloaded(_ change: (inout ShareSettings) -> Void) throws -> [ShareControl.Effect] {
            var next = settings
            next.maskWindow += ["Signal"]
            change(&next)
            return control.handle(.reload(.success(try ShareConfiguration(next, environment: [:], destinationKinds: testKinds))))
        }
        func refusal(_ effects: [ShareControl.Effect]) -> String? {
            guard effects.count == 1, case .log(.error, let message) = effects[0] else { return nil }
            return message
        }
        // A pattern dropped, a region dropped or shrunk, solid given up for pixelate; one added at run time and not in the file.
        let dropped = refusal(try reloaded { $0.maskWindow.removeFirst(); $0.fps = 10 })
        #expect(dropped?.contains("windows matching \"KeePassXC\"") == true && dropped?.contains("screenpub mask remove") == true, "\(dropped ?? "accepted")")
        #expect(refusal(try reloaded { $0.maskRegion = ["0,0,200,50"] })?.contains("region 0,0,200,100") == true)
        #expect(refusal(try reloaded { $0.maskStyle = .pixelate })?.contains("solid") == true)
        #expect(refusal(control.handle(.reload(.success(try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds)))))?
            .contains("windows matching \"Signal\"") == true)
        #expect(control.capture == running, "the running share keeps its masks and settings")
        // Hiding more (a larger region, another pattern, solid for pixelate) is applied.
        let more = try reloaded { $0.maskRegion = ["0,0,400,300"]; $0.maskWindow.append("1Password") }
        #expect(more.contains { if case .restartCapture = $0 { true } else { false } }, "\(more)")
        #expect(control.capture.source.mask.windowPatterns.count == 4)
    }

    @Test func stopIsFinalAndRefusesPause() {
        var control = ShareControl(configuration: configuration)
        #expect(control.handle(.stop) == [.log(.info, "stopping (screenpub stop)"), .reply(.status), .stopShare])
        #expect(control.handle(.stop) == [.reply(.status)])
        #expect(control.handle(.pause) == [.reply(.refused("screenpub is stopping"))])
        #expect(control.handle(.reload(.success(configuration))) == [])
        #expect(control.state == .stopping)
    }

    @Test func muteAndUnmuteStopTheSoundAloneAndPausingSilencesItToo() throws {
        var settings = ShareSettings.testing(to: ["collect:a"], fps: 5)
        settings.audio = "desktop"
        var control = ShareControl(configuration: try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds))
        #expect(ShareControl.Command("mute") == .mute && ShareControl.Command("unmute") == .unmute)
        #expect(control.handle(.mute) == [
            .setMuted(true), .announce(StreamAnnouncement(hasVideo: true, framesPerSecond: 5, hasAudio: false)),
            .log(.info, "muted: no sound is sent until `screenpub unmute`"), .reply(.status),
        ])
        #expect(control.handle(.mute) == [.reply(.status)])
        #expect(control.handle(.unmute) == [
            .setMuted(false), .announce(StreamAnnouncement(hasVideo: true, framesPerSecond: 5, hasAudio: true)), .log(.info, "unmuted"), .reply(.status),
        ])
        // A paused share sends no sound either; resuming brings it back unless muted.
        #expect(control.handle(.pause).contains(.announce(StreamAnnouncement(hasVideo: false, framesPerSecond: 5, hasAudio: false))))
        #expect(control.handle(.resume).contains(.announce(StreamAnnouncement(hasVideo: true, framesPerSecond: 5, hasAudio: true))))
        // Without sound there is nothing to mute: said so, with what to do.
        var silent = ShareControl(configuration: configuration)
        guard case .reply(.refused(let message))? = silent.handle(.mute).first else {
            Issue.record("mute without sound was not refused")
            return
        }
        #expect(message.contains("--audio"))
        control.audioUnavailable()
        #expect(control.handle(.unmute).count == 1)
    }

    @Test func unknownCommandsAreRefusedByName() {
        var control = ShareControl(configuration: configuration)
        #expect(ShareControl.Command("status") == .status)
        #expect(control.handle(ShareControl.Command("dance")) == [.reply(.refused("unknown command 'dance' (status, pause, resume, mute, unmute, stop, mask add|remove PATTERN or --region X,Y,W,H)"))])
    }

    @Test func reloadAppliesCaptureSettingsKeepsTheCodecAndWarnsAboutTheRest() throws {
        var control = ShareControl(configuration: configuration)
        var settings = ShareSettings.testing(to: ["collect:b"], fps: 10)
        settings.codec = .vp8
        settings.speed = 12
        settings.chroma = .yuv420
        let next = try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds)
        let effects = control.handle(.reload(.success(next)))
        #expect(effects.contains(.log(.warning, "SIGHUP: codec changed; it takes effect at the next start")))
        #expect(effects.contains(.log(.warning, "SIGHUP: chroma changed; it takes effect at the next start")))
        #expect(effects.contains(.log(.warning, "SIGHUP: to changed; it takes effect at the next start")))
        #expect(effects.contains(.announce(StreamAnnouncement(hasVideo: true, framesPerSecond: 10, hasAudio: false))))
        guard case .restartCapture(let capture)? = effects.last else {
            Issue.record("no restart in \(effects)")
            return
        }
        #expect(capture.framesPerSecond == 10 && capture.codec == .auto && capture.encoder.codec == .av1 && capture.encoder.speed == nil)
        #expect(capture.encoder.chroma == configuration.capture.encoder.chroma)
        #expect(control.capture == capture)
        // The same settings again: nothing restarts.
        #expect(!control.handle(.reload(.success(next))).contains { if case .restartCapture = $0 { true } else { false } })
        #expect(control.handle(.reload(.failure(ShareError(.invalidSettings, "bad")))) == [.log(.error, "SIGHUP: the settings were not changed: bad")])
    }

    @Test func reloadAppliesChangedMasksAtOnce() throws {
        var control = ShareControl(configuration: configuration)
        var settings = ShareSettings.testing(to: ["collect:a"], fps: 5)
        settings.maskWindow = ["KeePassXC", "*Bitwarden*"]
        settings.maskRegion = ["0,0,200,100"]
        settings.maskStyle = .pixelate
        let effects = control.handle(.reload(.success(try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds))))
        guard case .restartCapture(let capture)? = effects.last else {
            Issue.record("no restart in \(effects)")
            return
        }
        #expect(capture.source.mask.windowPatterns.map(\.text) == ["KeePassXC", "*Bitwarden*"])
        #expect(capture.source.mask.regions == [PixelRect(x: 0, y: 0, width: 200, height: 100)] && capture.source.mask.style == .pixelate)
    }
}

/// Settings checked and resolved.
@Suite(.watchdog()) struct ShareConfigurationTests {
    @Test func destinationsComeFromOutputServerAndToInOrder() throws {
        var settings = ShareSettings()
        settings.output = "/tmp/a.webm"
        settings.server = "http://relay:8090"
        settings.to = ["file:/tmp/b.webm"]
        let configuration = try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds)
        #expect(configuration.destinations == ["/tmp/a.webm", "http://relay:8090", "file:/tmp/b.webm"])
        #expect(configuration.embeddedRelay == nil)
        #expect(configuration.capture.keepaliveInterval == 5)  // live viewers
    }

    @Test func noDestinationMeansTheEmbeddedRelayAndARecordingOnlyNeedsNoKeepalive() throws {
        let embedded = try ShareConfiguration(ShareSettings(), environment: ["XDG_STATE_HOME": "/state"])
        #expect(embedded.embeddedRelay == .init(port: 8090, dataDirectory: "/state/screenpub/relay-8090"))
        var recording = ShareSettings()
        recording.output = "/tmp/a.webm"
        #expect(try ShareConfiguration(recording, environment: [:], destinationKinds: testKinds).capture.keepaliveInterval == nil)
    }

    @Test func theEmbeddedRelayTakesItsAddressPublicURLAndCertificate() throws {
        let configuration = try ShareConfiguration(
            Self.changed {
                $0.host = "0.0.0.0"
                $0.publicURL = "https://screen.example.org"
                ($0.tlsCert, $0.tlsKey) = ("cert.pem", "key.pem")
            }, environment: [:], destinationKinds: testKinds)
        #expect(configuration.embeddedRelay?.host == "0.0.0.0")
        #expect(configuration.embeddedRelay?.publicURL == "https://screen.example.org")
        #expect(configuration.embeddedRelay?.tls == RelayTLSFiles(certificateChain: "cert.pem", privateKey: "key.pem"))
    }

    @Test func theEnvironmentGivenDecidesTheBackendAndTheControlSocket() throws {
        let wayland = try ShareConfiguration(ShareSettings(), environment: ["WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": "/run/user/7"])
        guard case .portal = wayland.capture.source else {
            Issue.record("expected the portal, got \(wayland.capture.source)")
            return
        }
        #expect(wayland.controlSocket == "/run/user/7/screenpub.sock")
        let x11 = try ShareConfiguration(ShareSettings(), environment: [:])
        guard case .x11 = x11.capture.source else {
            Issue.record("expected X11, got \(x11.capture.source)")
            return
        }
        #expect(x11.controlSocket == nil)
        // Given as "", there is none even where the default would be.
        var none = ShareSettings()
        none.controlSocket = ""
        #expect(try ShareConfiguration(none, environment: ["XDG_RUNTIME_DIR": "/run/user/7"]).controlSocket == nil)
    }

    static func changed(_ change: (inout ShareSettings) -> Void) -> ShareSettings {
        var settings = ShareSettings()
        change(&settings)
        return settings
    }

    @Test(arguments: [
        (changed { $0.fps = 0 }, "--fps must be more than 0 and at most 120, got 0"),
        (changed { $0.to = ["gopher://x"] }, "--to gopher://x: not a destination screenpub knows"),
        (changed { $0.server = "relay:8090" }, "--server must be an http:// or https:// URL, got 'relay:8090'"),
        (changed { $0.monitor = "0"; $0.window = "0x1" }, "give at most one of --monitor, --window and --region"),
        (changed { $0.metadata = String(repeating: "x", count: 33) }, "--metadata:"),
        (changed { $0.token = "t" }, "--token needs --server"),
        (changed { $0.tlsCert = "cert.pem" }, "--tls-cert and --tls-key go together"),
        (changed { $0.host = "0.0.0.0"; $0.output = "x.webm" }, "--host is for the relay inside screenpub"),
        (changed { $0.publicURL = "screen.example.org" }, "--public-url must be an http:// or https:// URL"),
        (changed { $0.caFile = "/nonexistent/ca.pem" }, "--ca-file: cannot use the CA file /nonexistent/ca.pem: it cannot be read"),
        (changed { $0.maskWindow = ["**"] }, "--mask-window: window pattern \"**\" would match every window; use --mask-region"),
        (changed { $0.maskWindow = ["[Kk]ee[pass"] }, "--mask-window: window pattern \"[Kk]ee[pass\" has a \"[\" that is not closed"),
        (changed { $0.maskWindow = ["  "] }, "--mask-window: a window pattern is empty"),
        (changed { $0.maskRegion = ["10,10,0,50"] }, "--mask-region: a mask region is X,Y,W,H in pixels of the captured area"),
        (changed { $0.maskRegion = ["a,b,c,d"] }, "--mask-region: a mask region is X,Y,W,H"),
        (changed { $0.backend = .pipewire; $0.maskWindow = ["KeePassXC"] }, "--mask-window is for X11 capture: a Wayland screen cast names no windows"),
    ])
    func badSettingsAreRefusedWithTheOptionsName(settings: ShareSettings, message: String) {
        #expect {
            _ = try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds)
        } throws: { error in
            (error as? ShareError)?.description.hasPrefix(message) == true
        }
    }

    /// The backend is resolved in the environment the share runs in before anything is checked against it: on
    /// a Wayland session `--backend auto` is the portal, where window masks cannot be applied, so they are
    /// refused there, naming what can be done instead, and accepted where X11 is what runs.
    @Test(arguments: [["WAYLAND_DISPLAY": "wayland-0"], ["XDG_SESSION_TYPE": "wayland"]])
    func windowMasksOnAWaylandSessionAreRefusedWithTheDefaultBackend(environment: [String: String]) throws {
        let settings = Self.changed { $0.maskWindow = ["secret*"] }
        #expect {
            _ = try ShareConfiguration(settings, environment: ShareEnvironment(variables: environment), destinationKinds: testKinds)
        } throws: { error in
            let message = (error as? ShareError)?.description ?? ""
            return (error as? ShareError)?.kind == .invalidSettings && message.contains("--mask-region") && message.contains("--portal-source window")
        }
        // The same on X11, or with an X display asked for on that Wayland session (XWayland): window masks work.
        #expect(try ShareConfiguration(settings, environment: ["DISPLAY": ":0"], destinationKinds: testKinds).capture.source.namesWindows)
        var xwayland = settings
        xwayland.display = ":0"
        #expect(try ShareConfiguration(xwayland, environment: ShareEnvironment(variables: environment), destinationKinds: testKinds).capture.source.mask.windowPatterns.count == 1)
        // Regions are applied on the portal's stream.
        let regions = Self.changed { $0.maskRegion = ["0,0,10,10"] }
        guard case .portal(let request) = try ShareConfiguration(regions, environment: ShareEnvironment(variables: environment), destinationKinds: testKinds).capture.source else {
            Issue.record("--backend auto on Wayland did not pick the portal")
            return
        }
        #expect(request.mask.regions == [PixelRect(x: 0, y: 0, width: 10, height: 10)])
    }
}
