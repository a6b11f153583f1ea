import ArgumentParser
import Foundation
import ScreenMedia
import ScreenTesting

/// What publishing over WHIP adds: screenpub's CPU recording a changing 1280×720 screen to a file, then the same
/// with a WHIP destination into Janus (in a network namespace, ``JanusSFU``) beside it; and the delay from a
/// change on the screen to the first picture a viewer through Janus decodes with it.
struct WHIPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whip", abstract: "Measure the CPU WHIP adds to a share, and capture → Janus-viewer latency.")

    @Option(help: "Seconds per run.")
    var seconds = 20.0

    @Option(help: "Frames per second.")
    var fps = 5.0

    func run() async throws {
        try await JanusSFU().use { try await measure($0) }
    }

    private func measure(_ sfu: JanusSFU) async throws {
        let display = try await VirtualDisplay(width: 1280, height: 720)
        let painter = try XPainter(displayName: display.name)
        let background = painter.createWindow(PixelRect(x: 0, y: 0, width: 1280, height: 720), color: XPainter.pixel(red: 255, green: 0, blue: 0))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("whip-bench-\(UUID().uuidString).webm").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let screenpub = ChildProcess.productsDirectory + "/screenpub"
        let common = ["--display", display.name, "--fps", String(fps), "--codec", "vp9", "--no-cursor", "--control-socket", "", "--output", file, "--overwrite"]

        // Alone: the same painting for `seconds`.
        let alone = try ChildProcess(screenpub, common)
        try await Task.sleep(for: .seconds(2))
        let aloneCPU = try await cpu(of: alone) { _ = try await paint(painter, background, flips: true) }

        // With WHIP beside the file, while a viewer through Janus decodes and the screen flips colour every 2 s.
        let both = try ChildProcess(screenpub, common + ["--publish", sfu.whipURL, "--whip-token", sfu.token])
        defer { both.endInBackground(signal: SIGKILL) }
        guard try await eventually(30, { both.errorsSoFar.contains("over WHIP") }) else {
            throw ValidationError("screenpub did not publish over WHIP: \(both.errorsSoFar)")
        }
        let viewer = try sfu.startWatching(port: 5010, seconds: seconds + 2)
        try await Task.sleep(for: .seconds(2))
        var flips: [(time: Double, blue: Bool)] = []
        let bothCPU = try await cpu(of: both) { flips = try await paint(painter, background, flips: true) }
        let pictures = JanusSFU.pictures(in: await viewer.wait(timeout: 60).standardOutput)
        let latencies = flips.compactMap { flip -> Double? in
            pictures.first { $0.time >= flip.time && (flip.blue ? $0.b > 200 && $0.r < 60 : $0.r > 200 && $0.b < 60) }
                .map { ($0.time - flip.time) * 1000 }
        }

        print("1280×720 typing at \(fps) fps with the lower part of the screen flipping between red and blue every 2 s, VP9, \(Int(seconds)) s per run:")
        print("")
        print("| run | CPU % of a core |")
        print("|---|---:|")
        print(String(format: "| screenpub → file | %.2f |", aloneCPU))
        print(String(format: "| screenpub → file + WHIP into Janus | %.2f |", bothCPU))
        print(String(format: "| added by WHIP | %.2f |", bothCPU - aloneCPU))
        print("")
        if latencies.isEmpty {
            print("no colour change reached the Janus viewer (\(pictures.count) pictures)")
        } else {
            let sorted = latencies.sorted()
            print(String(format: "capture → Janus viewer (a change painted until a viewer through Janus has decoded it), %d changes: median %.0f ms, max %.0f ms",
                sorted.count, sorted[sorted.count / 2], sorted.last!))
        }
    }

    /// CPU % of a core `share` uses while `work` runs; then stops it.
    private func cpu(of share: ChildProcess, during work: () async throws -> Void) async throws -> Double {
        let started = ContinuousClock.now
        let before = Fanout.cpuSeconds(of: share.processID)
        try await work()
        let after = Fanout.cpuSeconds(of: share.processID)
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        share.signal(SIGTERM)
        _ = await share.wait(timeout: 20)
        return 100 * (after - before) / elapsed
    }

    /// Typing (a character's worth of change per frame) for `seconds`; with `flips`, the lower part of the screen
    /// turns blue or red every 2 s (the changes whose arrival at the viewer is timed). Returns when each flip was painted (Unix seconds) and its colour.
    private func paint(_ painter: XPainter, _ window: UInt, flips: Bool) async throws -> [(time: Double, blue: Bool)] {
        var made: [(time: Double, blue: Bool)] = []
        let end = Date().addingTimeInterval(seconds)
        var step = 0, blue = false
        var nextFlip = Date().addingTimeInterval(2)
        while Date() < end {
            painter.fill(window: window, PixelRect(x: 40 + (step % 120) * 9, y: 40 + (step / 120 % 8) * 16, width: 8, height: 14),
                color: XPainter.pixel(red: 0, green: 0, blue: 0))
            if flips, Date() >= nextFlip {
                blue.toggle()
                painter.fill(window: window, PixelRect(x: 0, y: 200, width: 1280, height: 520),
                    color: blue ? XPainter.pixel(red: 0, green: 0, blue: 255) : XPainter.pixel(red: 255, green: 0, blue: 0))
                made.append((Date().timeIntervalSince1970, blue))
                nextFlip = nextFlip.addingTimeInterval(2)
            }
            painter.sync()
            step += 1
            try await Task.sleep(for: .milliseconds(Int(1000 / fps)))
        }
        return made
    }
}
