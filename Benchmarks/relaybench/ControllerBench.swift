import ArgumentParser
import Foundation
import ScreenSession

/// What the uplink controller costs per frame: a million frames sent and acknowledged on a simulated 1 Mbit/s
/// link, timed with the process's CPU clock.
struct ControllerBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "controller", abstract: "Measure the uplink controller's CPU per frame (sent + acknowledged + admission check).")

    @Option(help: "Frames to simulate.") var frames = 1_000_000

    func run() throws {
        var controller = UplinkController(configuration: .init(maximumKbps: 1500))
        var busyUntil = 0.0
        var admitted = 0
        let start = clock()
        for n in 0..<frames {
            let now = Double(n) * 0.2
            let bytes = 20_000 + (n % 7) * 3_000
            if now >= controller.framesWaitUntil(queuedBytes: 0) { admitted += 1 }
            controller.sent(sequence: UInt64(n), bytes: bytes, now: now)
            busyUntil = max(busyUntil, now) + Double(bytes) * 8 / 1_000_000
            controller.acknowledged(sequence: UInt64(n), receivedAt: busyUntil * 1000 + 1_000_000, now: busyUntil + 0.005)
        }
        let seconds = Double(clock() - start) / Double(CLOCKS_PER_SEC)
        print(String(format: "uplink controller: %.0f ns of CPU per frame (%d frames, target %d kbit/s, %d admitted at once)",
                     seconds * 1e9 / Double(frames), frames, controller.targetKbps, admitted))
    }
}
