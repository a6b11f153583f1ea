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
        let sfu = try await JanusSFU()
        do {
            try await measure(sfu)
        } catch {
            await sfu.stop()
            throw error
        }
        await sfu.stop()
    }

    private func measure(_ sfu: JanusSFU) async throws {
        let display = try await VirtualDisplay(width: 1280, height: 720)
        let painter = try XPainter(displayName: display.name)
        let background = painter.createWindow(PixelRect(x: 0, y: 0, width: 1280, height: 720), color: XPainter.pixel(red: 255, green: 0, blue: 0))
        // Typing: a few characters' worth of change per frame.
        let typing = Task {
            var step = 0
            while !Task.isCancelled {
                painter.fill(window: background, PixelRect(x: 40 + (step % 120) * 9, y: 40 + (step / 120 % 40) * 16, width: 8, height: 14),
                    color: XPainter.pixel(red: 0, green: 0, blue: 0))
                painter.sync()
                step += 1
                try await Task.sleep(for: .milliseconds(Int(1000 / fps)))
            }
        }
        defer { typing.cancel() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("whip-bench-\(UUID().uuidString).webm").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let common = ["--display", display.name, "--fps", String(fps), "--codec", "vp9", "--no-cursor", "--control-socket", "", "--output", file, "--overwrite"]
        let alone = try await cpu(common)
        let (withWHIP, latencies) = try await cpuWithWHIP(common, sfu: sfu, painter: painter, background: background)
        print("1280×720 typing at \(fps) fps, VP9, \(Int(seconds)) s per run:")
        print("")
        print("| run | CPU % of a core |")
        print("|---|---:|")
        print(String(format: "| screenpub → file | %.2f |", alone))
        print(String(format: "| screenpub → file + WHIP into Janus | %.2f |", withWHIP))
        print(String(format: "| added by WHIP | %.2f |", withWHIP - alone))
        if latencies.isEmpty {
            print("\nno colour change reached the Janus viewer")
        } else {
            let sorted = latencies.sorted()
            print(String(format: "\ncapture → Janus viewer (a colour change on the screen until the viewer decodes it), %d changes: median %.0f ms, max %.0f ms",
                sorted.count, sorted[sorted.count / 2], sorted.last!))
        }
    }

    private func cpu(_ arguments: [String]) async throws -> Double {
        let share = try ChildProcess(ChildProcess.productsDirectory + "/screenpub", arguments)
        try await Task.sleep(for: .seconds(2))
        let before = Latency.cpuSeconds(of: share.processID)
        try await Task.sleep(for: .seconds(seconds))
        let after = Latency.cpuSeconds(of: share.processID)
        share.signal(SIGTERM)
        _ = await share.wait(timeout: 20)
        return 100 * (after - before) / seconds
    }

    private func cpuWithWHIP(_ arguments: [String], sfu: JanusSFU, painter: XPainter, background: UInt) async throws -> (Double, [Double]) {
        let share = try ChildProcess(
            ChildProcess.productsDirectory + "/screenpub", arguments + ["--publish", sfu.whipURL, "--whip-token", sfu.token])
        defer { share.endInBackground(signal: SIGKILL) }
        guard try await eventually(30, { share.errorsSoFar.contains("over WHIP") }) else {
            throw ValidationError("screenpub did not publish over WHIP: \(share.errorsSoFar)")
        }
        try await Task.sleep(for: .seconds(1))
        let started = ContinuousClock.now
        let before = Latency.cpuSeconds(of: share.processID)
        // Colour flips the viewer through Janus times: red ↔ blue every 2 s.
        var flips: [(time: Double, blue: Bool)] = []
        let flipping = Task { @MainActor [seconds] in
            var blue = false
            var made: [(Double, Bool)] = []
            let end = Date().addingTimeInterval(seconds - 3)
            try await Task.sleep(for: .seconds(2))
            while Date() < end {
                blue.toggle()
                painter.fill(window: background, PixelRect(x: 0, y: 200, width: 1280, height: 520),
                    color: blue ? XPainter.pixel(red: 0, green: 0, blue: 255) : XPainter.pixel(red: 255, green: 0, blue: 0))
                painter.sync()
                made.append((Date().timeIntervalSince1970, blue))
                try await Task.sleep(for: .seconds(2))
            }
            return made
        }
        let pictures = try await sfu.watch(port: 5010, seconds: seconds)
        flips = try await flipping.value.map { (time: $0.0, blue: $0.1) }
        let after = Latency.cpuSeconds(of: share.processID)
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        share.signal(SIGTERM)
        _ = await share.wait(timeout: 20)
        let latencies = flips.compactMap { flip -> Double? in
            pictures.first { $0.time >= flip.time && (flip.blue ? $0.b > 200 && $0.r < 60 : $0.r > 200 && $0.b < 60) }
                .map { ($0.time - flip.time) * 1000 }
        }
        return (100 * (after - before) / elapsed, latencies)
    }
}
