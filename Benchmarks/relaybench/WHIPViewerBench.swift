import ArgumentParser
import Foundation
import ScreenMedia
import ScreenTesting

/// Capture → display for a viewer through an SFU beside the relay's: one screenpub sharing a 640×360 Xvfb with
/// sound to a screenrelay and over WHIP into Janus (``JanusSFU``); the relay's viewer page and the WHIP viewer page
/// (packaging/whip-viewer) in two headless Chromiums on this machine (one wall clock). Then beeps and white flashes
/// at the same instants, whose audio − video offset is measured where the WHIP page plays them.
struct WHIPViewerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whip-viewer",
        abstract: "Capture → display on the WHIP viewer (through Janus) beside the relay's viewer, and A/V offset through Janus.")

    @Option(help: "Seconds of typing measured.")
    var seconds = 20.0

    @Option(help: "Frames per second.")
    var fps = 10.0

    @Option(help: "Beeps and flashes (one a second) for the A/V offset.")
    var beeps = 20

    static let secret = "relaybench-whip-viewer-secret-of-32-bytes-or-more"

    func run() async throws {
        try await JanusSFU().use { try await measure($0) }
    }

    private func measure(_ sfu: JanusSFU) async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        defer { pipewire.stop() }
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-bench-whip", signal: .silence)
        try await tone.waitUntilListed(on: pipewire)
        let display = try await VirtualDisplay(width: 640, height: 360)
        let painter = try XPainter(displayName: display.name)
        let black = XPainter.pixel(red: 0, green: 0, blue: 0)
        let canvas = painter.createWindow(PixelRect(x: 0, y: 0, width: 640, height: 360), color: XPainter.pixel(red: 40, green: 40, blue: 90))
        painter.sync()

        let home = FileManager.default.temporaryDirectory.appendingPathComponent("whipviewerbench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") && !$0.key.hasPrefix("SCREENRELAY_") }
        environment["SCREENRELAY_SECRET"] = Self.secret
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_STATE_HOME"] = home + "/state"
        environment["PIPEWIRE_RUNTIME_DIR"] = pipewire.runtimeDirectory
        let relay = try ChildProcess(ChildProcess.productsDirectory + "/screenrelay", ["--port", "0"], environment: environment)
        defer { relay.endInBackground(signal: SIGTERM, timeout: 10) }
        var port: Int?
        for _ in 0..<400 where port == nil {
            try await Task.sleep(for: .milliseconds(50))
            if let range = relay.errorsSoFar.range(of: #"listening on port (\d+)"#, options: .regularExpression) {
                port = Int(relay.errorsSoFar[range].split(separator: " ").last ?? "")
            }
        }
        guard let port else { throw ValidationError("screenrelay did not start: \(relay.errorsSoFar)") }
        let share = try ChildProcess(
            ChildProcess.productsDirectory + "/screenpub",
            ["--display", display.name, "--server", "http://127.0.0.1:\(port)", "--publish", sfu.whipURL, "--whip-token", sfu.token,
             "--audio", tone.name, "--fps", String(fps), "--codec", "vp9", "--no-cursor", "--control-socket", ""],
            environment: environment)
        defer { share.endInBackground(signal: SIGTERM, timeout: 10) }
        var viewer = ""
        for _ in 0..<600 where viewer.isEmpty || !share.errorsSoFar.contains("over WHIP") {
            try await Task.sleep(for: .milliseconds(50))
            viewer = share.outputSoFar.split(separator: "\n").first { $0.hasPrefix("viewer:") }.map { String($0.dropFirst(7)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        guard !viewer.isEmpty, share.errorsSoFar.contains("over WHIP") else { throw ValidationError("screenpub did not publish to both: \(share.errorsSoFar)") }

        let relayPage = try await HeadlessBrowser(url: viewer, arguments: ["--autoplay-policy=no-user-gesture-required"])
        defer { relayPage.close() }
        let whipPage = try await WHIPViewerPage(sfu: sfu)
        defer { whipPage.close() }
        try await Task.sleep(for: .seconds(3))

        // Typing: a character's change every frame interval; the relay page sampled every 50 ms (its latest frame's).
        let before = try await whipPage.shown().count
        var relaySamples: [Double] = []
        var step = 0
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var nextPaint = ContinuousClock.now
        while ContinuousClock.now < end {
            if ContinuousClock.now >= nextPaint {
                painter.fill(window: canvas, PixelRect(x: 20 + (step % 60) * 10, y: 20 + (step / 60 % 18) * 18, width: 8, height: 14),
                    color: XPainter.pixel(red: 230, green: 230, blue: 230))
                painter.sync()
                step += 1
                nextPaint = nextPaint + .milliseconds(Int(1000 / fps))
            }
            if let latency = try? await relayPage.evaluate("screenViewer.lastLatencyMs", as: Double.self) { relaySamples.append(latency) }
            try await Task.sleep(for: .milliseconds(50))
        }
        let whipLatencies = try await whipPage.shown().dropFirst(before).compactMap(\.captureToDisplayMs)
        let state = try await whipPage.state()
        // Where the WHIP page's time goes: the browser's video jitter buffer and decoding (its own statistics).
        _ = try await whipPage.browser.evaluate(
            """
            (window.whipSubscriber.pc.getStats().then((report) => report.forEach((entry) => {
              if (entry.type === 'inbound-rtp' && entry.kind === 'video') window.videoStats = {
                jitterBufferMs: 1000 * entry.jitterBufferDelay / Math.max(1, entry.jitterBufferEmittedCount),
                decodeMs: 1000 * entry.totalDecodeTime / Math.max(1, entry.framesDecoded) };
            })), true)
            """, as: Bool.self)
        try await Task.sleep(for: .milliseconds(300))
        struct VideoStats: Decodable { var jitterBufferMs: Double; var decodeMs: Double }
        let stats: VideoStats? = try? await whipPage.browser.evaluate("window.videoStats")
        print("640×360 typing at \(Int(fps)) fps, VP9, sound on, \(Int(seconds)) s, both pages on this machine (one wall clock):")
        print("")
        print("| viewer | frames | capture → display p50 ms | p90 ms | p99 ms |")
        print("|---|---:|---:|---:|---:|")
        for (name, samples) in [("relay viewer (WebCodecs, drawn)", relaySamples), ("WHIP viewer through Janus (rVFC expected display)", whipLatencies)] {
            let (p50, p90, p99, _) = percentiles(samples)
            print(String(format: "| %@ | %d | %.0f | %.0f | %.0f |", name, samples.count, p50, p90, p99))
        }
        print("(relay: its latest frame's value sampled every 50 ms; WHIP: every shown frame; \(state.framesPaired) of \(state.framesShown) WHIP frames paired, \(state.lateMessages) by a late message)")
        if let stats {
            print(String(format: "WHIP page's WebRTC statistics: video jitter buffer mean %.0f ms, decode mean %.1f ms a frame", stats.jitterBufferMs, stats.decodeMs))
        }

        // Beeps and flashes at the same instants; the WHIP page notes when it shows each flash (rVFC's expected display
        // time) and when each beep is heard (a WebAudio analyser of the received track, its output timestamp).
        try await whipPage.startAVProbe()
        painter.fill(window: canvas, PixelRect(x: 0, y: 0, width: 640, height: 360), color: black)
        painter.sync()
        try await Task.sleep(for: .seconds(1))
        let clock = MonotonicClock()
        let start = clock.nanoseconds(fromTicks: clock.now()) + 1_000_000_000
        let instants = (0..<beeps).map { start + UInt64($0) * 1_000_000_000 + UInt64.random(in: 0..<UInt64(1e9 / fps)) }
        tone.play(.beeps(frequency: 1000, at: instants, milliseconds: 150))
        try await painter.flash(window: canvas, PixelRect(x: 0, y: 0, width: 640, height: 360), at: instants, clock: clock)
        try await Task.sleep(for: .seconds(2))
        let probe = try await whipPage.avProbe()
        let offsets = probe.offsets
        let (p50, _, p99, _) = percentiles(offsets)
        print(String(format: "A/V on the WHIP viewer through Janus: %d of %d flashes paired with a beep (%d beeps heard); audio − video p50 %.0f ms p99 %.0f ms, min %.0f max %.0f",
                     offsets.count, beeps, probe.beeps.count, p50, p99, offsets.min() ?? .nan, offsets.max() ?? .nan))
    }
}
