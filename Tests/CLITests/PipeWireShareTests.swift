import Foundation
import ScreenCodec
import ScreenMedia
import ScreenRecording
import ScreenTesting
import Testing

/// `screenpub` on the PipeWire backend: a node given directly, and the ScreenCast portal flow through the real
/// xdg-desktop-portal on a private bus (with the test backend standing in for the desktop's), including the
/// remembered grant and each way it can fail.
@Suite(.watchdog(), .serialized) struct PipeWireShareTests {
    static let screenpub = ChildProcess.productsDirectory + "/screenpub"
    static let color: (r: UInt8, g: UInt8, b: UInt8) = (40, 170, 90)

    /// Runs screenpub to the end, recording to a file, with the private session's environment.
    func share(_ arguments: [String], _ pipewire: PrivatePipeWire, extra: [String: String] = [:], timeout: Double = 60) async throws
        -> (outcome: ChildProcess.Outcome, path: String)
    {
        let path = pipewire.runtimeDirectory + "/share-\(UUID().uuidString.prefix(8)).webm"
        var environment = pipewire.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        environment.merge(extra) { $1 }
        let outcome = try await ChildProcess.run(
            Self.screenpub, ["--output", path, "--duration", "1.5", "--fps", "10"] + arguments, environment: environment, timeout: timeout)
        return (outcome, path)
    }

    /// The recording's frames are the producer's picture at its size.
    func expectRecordingOfTheProducer(_ path: String, width: Int, height: Int) throws {
        let reader = try WebMReader(path: path)
        let frames = try reader.readAll()
        #expect(frames.count >= 2, "frames: \(frames.count)")
        let decoder = try makeVideoDecoder(for: reader.codec)
        var checked = 0
        for frame in frames {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in
                    #expect(picture.width == width && picture.height == height)
                    #expect(TestPattern.difference(picture, x: width / 2, y: height / 2, Self.color) <= 12)
                    checked += 1
                }
            }
        }
        #expect(checked == frames.count)
    }

    @Test func sharesAPipeWireNodeGivenById() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 200, color: Self.color)
        let node = try await producer.nodeID()
        let (outcome, path) = try await share(["--pipewire-node", String(node)], pipewire)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("PipeWire node \(node) (320×200)"), "\(outcome.standardError)")
        try expectRecordingOfTheProducer(path, width: 320, height: 200)
    }

    @Test func anInheritedPipeWireConnectionServesAReloadToo() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let producer = try PipeWireTestProducer(on: pipewire, width: 160, height: 96, color: Self.color)
        let node = try await producer.nodeID()
        // As a launcher hands one over: a connected socket as descriptor 3, and no default daemon.
        let connection = try pipewire.connect()
        defer { close(connection) }
        let config = pipewire.runtimeDirectory + "/config/screenpub/config.toml"
        try FileManager.default.createDirectory(atPath: (config as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "fps = 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        var environment = pipewire.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["PIPEWIRE_REMOTE"] = "no-such-daemon"  // the default connection would fail
        let path = pipewire.runtimeDirectory + "/inherited.webm"
        let share = try ChildProcess(
            Self.screenpub, ["--pipewire-node", String(node), "--pipewire-remote", "3", "--output", path, "--duration", "4"],
            environment: environment, passing: connection)
        #expect(try await eventually(30) { share.errorsSoFar.contains("capturing PipeWire node") }, "\(share.errorsSoFar)")
        try "fps = 10\n".write(toFile: config, atomically: true, encoding: .utf8)
        share.signal(SIGHUP)
        let outcome = await share.wait(timeout: 30)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("SIGHUP: restarting the capture"), "\(outcome.standardError)")
        #expect(outcome.standardError.components(separatedBy: "capturing PipeWire node").count == 3, "\(outcome.standardError)")
        try expectRecordingOfTheProducer(path, width: 160, height: 96)
    }

    @Test func theFirstStartAsksThePortalAndTheSecondSendsTheSavedGrant() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 256, height: 160, order: .rgbx, color: Self.color)
        let node = try await producer.nodeID()
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: node, size: (256, 160))
        let tokenFile = pipewire.runtimeDirectory + "/state/screenpub/portal-restore-token"

        // A Wayland session: --backend auto picks the portal.
        let first = try await share([], pipewire, extra: ["WAYLAND_DISPLAY": "wayland-0"])
        #expect(first.outcome.status == 0, "\(first.outcome.standardError)\n\(backend.errors)")
        #expect(first.outcome.standardError.contains("asking the ScreenCast portal for a monitor"), "\(first.outcome.standardError)")
        try expectRecordingOfTheProducer(first.path, width: 256, height: 160)
        let firstToken = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: firstToken) != nil, "the portal's restore token is a UUID: \(firstToken)")
        let mode = try #require(FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int)
        #expect(mode == 0o600)

        let second = try await share(["--backend", "pipewire"], pipewire)
        #expect(second.outcome.status == 0, "\(second.outcome.standardError)")
        #expect(second.outcome.standardError.contains("with the grant saved in \(tokenFile)"), "\(second.outcome.standardError)")
        try expectRecordingOfTheProducer(second.path, width: 256, height: 160)

        // What the frontend passed to the backend: persist mode 2 both times; the second time, the data the
        // backend stored with the first grant, looked up by the token screenpub saved.
        let selections = backend.selectSourcesOptions()
        #expect(selections.count == 2)
        #expect(selections.allSatisfy { $0["persist_mode"] as? Int == 2 }, "\(selections)")
        #expect(selections.allSatisfy { $0["types"] as? Int == 1 && $0["cursor_mode"] as? Int == 2 }, "\(selections)")
        #expect(selections.first?["restore_data"] == nil)
        let restored = selections.last?["restore_data"] as? [Any]
        #expect(restored?.first as? String == "screenpubtest" && restored?.last as? String == "monitor-0", "\(selections)")
        // The file holds the token of the latest grant (this portal version renews the same one; the
        // specification lets a portal issue a new one each time).
        let secondToken = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: secondToken) != nil)
        // Each run's session was closed at its end (the portal passes the Close on asynchronously).
        let closed = try await eventually(10) { backend.calls().filter { $0["method"] as? String == "Session.Close" }.count == 2 }
        #expect(closed, "\(backend.calls())")
    }

    @Test func aSavedGrantThePortalRefusesIsReplacedByANewOne() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 128, height: 96, color: Self.color)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), answer: .failRestored)
        let first = try await share(["--backend", "pipewire"], pipewire)
        #expect(first.outcome.status == 0, "\(first.outcome.standardError)")
        let second = try await share(["--backend", "pipewire"], pipewire)
        #expect(second.outcome.status == 0, "\(second.outcome.standardError)")
        #expect(second.outcome.standardError.contains("refused the saved grant"), "\(second.outcome.standardError)")
        try expectRecordingOfTheProducer(second.path, width: 128, height: 96)
        // Asked with the saved grant, refused, asked afresh.
        let restoreData = backend.selectSourcesOptions().map { $0["restore_data"] != nil }
        #expect(restoreData == [false, true, false], "\(backend.calls())")
        #expect(FileManager.default.fileExists(atPath: pipewire.runtimeDirectory + "/state/screenpub/portal-restore-token"))
    }

    /// A producer offering a range of cursor metadata sizes, and one offering exactly mutter's (room for a
    /// 384×384 pointer, 589,872 bytes).
    @Test(arguments: [nil, 384] as [UInt32?])
    func aBackendThatCannotEmbedThePointerSendsItAsMetadataWhichIsDrawn(cursorMetadataSide: UInt32?) async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(
            on: pipewire, width: 320, height: 200, color: Self.color, cursorMetadataSide: cursorMetadataSide)
        producer.setCursor(x: 100, y: 100)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), cursorModes: 1 | 4)
        let (outcome, path) = try await share(["--backend", "pipewire"], pipewire)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("draws it from PipeWire cursor metadata"), "\(outcome.standardError)")
        #expect(backend.selectSourcesOptions().first?["cursor_mode"] as? Int == 4, "\(backend.calls())")
        // The last picture has the pointer (a 16×16 square from its hotspot) on the producer's colour.
        let reader = try WebMReader(path: path)
        let frames = try reader.readAll()
        let decoder = try makeVideoDecoder(for: reader.codec)
        var last: (inside: Int, outside: Int)?
        for frame in frames {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in
                    last = (
                        TestPattern.difference(picture, x: 108, y: 108, PipeWireTestProducer.cursorColor),
                        TestPattern.difference(picture, x: 200, y: 60, Self.color)
                    )
                }
            }
        }
        #expect(last.map { $0.inside <= 16 && $0.outside <= 12 } == true, "\(String(describing: last))")
        #expect(!outcome.standardError.contains("sends no cursor metadata"), "\(outcome.standardError)")
    }

    /// Cursor metadata too big to accept (a 600×600 pointer) is not negotiated: the share goes on without the
    /// pointer and says why, once.
    @Test func cursorMetadataThatCannotBeNegotiatedIsWarnedAboutOnce() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 320, height: 200, color: Self.color, cursorMetadataSide: 600)
        producer.setCursor(x: 100, y: 100)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), cursorModes: 1 | 4)
        let (outcome, _) = try await share(["--backend", "pipewire"], pipewire)
        withExtendedLifetime(backend) {}
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.components(separatedBy: "sends no cursor metadata").count == 2, "\(outcome.standardError)")
    }

    @Test func aScreenCastThatEndsIsGrantedAgainSilentlyWithCaptureRetry() async throws {
        let pipewire = try await PrivatePipeWire()
        let first = try PipeWireTestProducer(on: pipewire, width: 200, height: 120, color: (200, 40, 40))
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await first.nodeID())
        var environment = pipewire.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["DISPLAY"] = nil
        let path = pipewire.runtimeDirectory + "/retry.webm"
        let share = try ChildProcess(
            Self.screenpub, ["--backend", "pipewire", "--output", path, "--fps", "10", "--capture-retry", "0.5", "--control-socket", pipewire.runtimeDirectory + "/sp.sock"],
            environment: environment)
        #expect(try await eventually { share.errorsSoFar.contains("capturing the screen cast granted by the portal") }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(1))
        // The desktop ends the cast (its node goes) and would start a new one on another node.
        let second = try PipeWireTestProducer(on: pipewire, width: 200, height: 120, color: (40, 200, 40))
        try backend.handOut(node: try await second.nodeID())
        first.stop()
        #expect(try await eventually { share.errorsSoFar.components(separatedBy: "capturing the screen cast granted by the portal").count == 3 }, "\(share.errorsSoFar)")
        try await Task.sleep(for: .seconds(1))
        share.signal(SIGTERM)
        let outcome = await share.wait(timeout: 20)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("asking the portal again"), "\(outcome.standardError)")
        // Asked again with the saved grant: no dialog.
        let selections = backend.selectSourcesOptions()
        #expect(selections.count == 2 && selections.last?["restore_data"] != nil, "\(backend.calls())")
        // One recording across both casts: red first, then green.
        let reader = try WebMReader(path: path)
        let frames = try reader.readAll()
        let decoder = try makeVideoDecoder(for: reader.codec)
        var colors: [Bool] = []
        for frame in frames {
            try frame.payload.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { picture in colors.append(TestPattern.difference(picture, x: 100, y: 60, (40, 200, 40)) <= 12) }
            }
        }
        #expect(colors.first == false && colors.last == true, "\(colors)")
    }

    @Test func aDeclinedDialogExitsWith77() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 64, height: 64, color: Self.color)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), answer: .cancel)
        let (outcome, path) = try await share(["--backend", "pipewire"], pipewire)
        #expect(outcome.status == 77, "\(outcome.standardError)\n\(backend.errors)")
        #expect(outcome.standardError.contains("screen sharing was declined"), "\(outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: pipewire.runtimeDirectory + "/state/screenpub/portal-restore-token"))
        #expect(((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0, "nothing recorded")
    }

    @Test func aMonitorGrantedWhereAWindowWasAskedIsNeverShared() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 64, height: 64, color: Self.color)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), answer: .grantMonitor)
        let (outcome, path) = try await share(["--backend", "pipewire", "--portal-source", "window"], pipewire)
        #expect(outcome.status == 2, "\(outcome.standardError)\n\(backend.errors)")
        #expect(outcome.standardError.contains("granted a whole monitor where a window was asked for"), "\(outcome.standardError)")
        #expect(((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0, "nothing recorded")
        #expect(!FileManager.default.fileExists(atPath: pipewire.runtimeDirectory + "/state/screenpub/portal-restore-token.window"), "no grant kept")
    }

    @Test func aPortalWithoutScreenCastIsNamed() async throws {
        // xdg-desktop-portal runs, but no backend for this desktop offers ScreenCast.
        let pipewire = try await PrivatePipeWire()
        let (outcome, _) = try await share(["--backend", "pipewire"], pipewire)
        #expect(outcome.status == 2, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("the desktop portal offers no ScreenCast"), "\(outcome.standardError)")
    }

    @Test func noPortalAtAllIsNamed() async throws {
        // A session bus on which nothing provides org.freedesktop.portal.Desktop.
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let started = Date()
        let (outcome, _) = try await share(["--backend", "pipewire"], pipewire)
        #expect(outcome.status == 2, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("no desktop portal answers on the session bus"), "\(outcome.standardError)")
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test func noPipeWireDaemonIsNamed() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-pipewire-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["XDG_RUNTIME_DIR"] = empty
        environment["PIPEWIRE_RUNTIME_DIR"] = empty
        environment["PIPEWIRE_REMOTE"] = nil
        environment["XDG_CONFIG_HOME"] = empty
        let outcome = try await ChildProcess.run(
            Self.screenpub, ["--pipewire-node", "42", "--output", empty + "/x.webm", "--duration", "1"], environment: environment, timeout: 30)
        #expect(outcome.status == 2, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("is the pipewire daemon running?"), "\(outcome.standardError)")
    }

    /// On a Wayland session `--backend auto` picks the portal, whose screen cast names no windows: a window mask
    /// is refused before the portal is asked for anything (exit 64, saying what to do instead), never ignored;
    /// a region mask is applied to what the portal grants.
    @Test func aWindowMaskOnAWaylandSessionIsRefusedBeforeThePortalIsAskedAndARegionIsApplied() async throws {
        let pipewire = try await PrivatePipeWire()
        let producer = try PipeWireTestProducer(on: pipewire, width: 256, height: 160, color: Self.color)
        let backend = try await ScreenCastPortalTestBackend(on: pipewire, node: try await producer.nodeID(), size: (256, 160))
        let refused = try await share(["--mask-window", "secret*"], pipewire, extra: ["WAYLAND_DISPLAY": "wayland-0"])
        #expect(refused.outcome.status == 64, "\(refused.outcome.standardError)")
        let said = refused.outcome.standardError
        #expect(said.contains("--mask-window cannot be applied on this Wayland session") && said.contains("--mask-region")
            && said.contains("--portal-source window"), "\(said)")
        #expect(backend.calls().allSatisfy { $0["method"] as? String == "ready" }, "the portal was asked: \(backend.calls())")
        #expect(!FileManager.default.fileExists(atPath: refused.path))

        let masked = try await share(["--mask-region", "0,0,64,64"], pipewire, extra: ["WAYLAND_DISPLAY": "wayland-0"])
        #expect(masked.outcome.status == 0, "\(masked.outcome.standardError)\n\(backend.errors)")
        #expect(masked.outcome.standardError.contains("asking the ScreenCast portal"), "\(masked.outcome.standardError)")
        let looks = try Pictures.measured(masked.path) { ($0.width, TestPattern.difference($0, x: 20, y: 20, Self.color), TestPattern.difference($0, x: 200, y: 120, Self.color)) }
        #expect(!looks.isEmpty && looks.allSatisfy { $0.0 == 256 && $0.1 > 40 && $0.2 <= 12 }, "\(looks)")
    }

    /// While a share captures through PipeWire, `screenpub mask add` of a window pattern is refused (nothing could
    /// hide it) and a SIGHUP whose configuration lost a region is refused whole: the share goes on, hiding what it
    /// hid. A region can be added at run time.
    @Test func changesWhileRunningThatWouldNotHideOrWouldShowAreRefusedAndTheMasksStay() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        let producer = try PipeWireTestProducer(on: pipewire, width: 256, height: 160, color: Self.color)
        let node = try await producer.nodeID()
        let share = try await RunningShare(
            ["--pipewire-node", String(node), "--fps", "10", "--keepalive", "0.2"], config: "mask-region = [\"0,0,64,64\"]\n",
            environment: ["PIPEWIRE_RUNTIME_DIR": pipewire.runtimeDirectory])
        let recording = share.home + "/subscriber.webm"
        let subscriber = try ChildProcess(RunningShare.screensub, ["--server", share.server, "--token", share.viewerToken, "--output", recording])
        #expect(try await eventually(20) { FileManager.default.fileExists(atPath: recording) }, "\(subscriber.errorsSoFar)")

        let window = try await share.control(["mask", "add", "--window", "secret*"])
        #expect(window.status == 1 && window.standardError.contains("captures through PipeWire") && window.standardError.contains("mask add --region"), "\(window.standardError)")
        #expect(try await share.status()["maskRegions"] as? [String] == ["0,0,64,64"])

        try "fps = 10\n".write(toFile: share.configFile, atomically: true, encoding: .utf8)
        share.process.signal(SIGHUP)
        #expect(try await eventually(30) { share.process.errorsSoFar.contains("SIGHUP: the settings were not changed: they would show region 0,0,64,64") }, "\(share.process.errorsSoFar)")
        let region = try await share.control(["mask", "add", "--region", "192,96,64,64"])
        #expect(region.status == 0 && region.standardOutput.contains("regions: 0,0,64,64; 192,96,64,64"), "\(region.standardOutput) \(region.standardError)")
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await share.status()["state"] as? String == "sharing")

        share.process.signal(SIGTERM)
        #expect(await share.process.wait(timeout: 20).status == 0)
        _ = await subscriber.wait(timeout: 20)
        let looks = try Pictures.measured(recording) { picture in
            (TestPattern.difference(picture, x: 20, y: 20, Self.color), TestPattern.difference(picture, x: 220, y: 130, Self.color))
        }
        #expect(looks.count >= 5 && looks.allSatisfy { $0.0 > 40 }, "the first region showed: \(looks)")
        #expect(looks.last.map { $0.1 > 40 } == true && looks.first.map { $0.1 <= 12 } == true, "the region added at run time: \(looks)")
    }

    @Test func x11OnlyOptionsAreRefusedWithPipeWire() async throws {
        let outcome = try await ChildProcess.run(Self.screenpub, ["--backend", "pipewire", "--monitor", "0"], timeout: 30)
        #expect(outcome.status == 64)
        #expect(outcome.standardError.contains("--monitor is for X11 capture"), "\(outcome.standardError)")
    }
}
