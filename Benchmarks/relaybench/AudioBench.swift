import ArgumentParser
import Foundation
import Logging
import ScreenCodec
import ScreenMedia
import ScreenSession
import ScreenTesting
import ScreenTransport
import ScreenTransportClient
import ScreenWire

/// Sound through screenpub and its relay, with real parts: a private PipeWire whose test source plays silence,
/// then music, then beeps each painted as a white flash on Xvfb at the same instant; screenpub (`--audio` that
/// source, its embedded relay) and a subscriber here that decodes the Opus and the pictures. Reports the audio
/// thread's CPU and the bytes per minute of silence and of music, capture → arrival latency through the relay,
/// and the audio − video offset of every flash and beep (p50/p99).
struct AudioBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio", abstract: "Measure screenpub's sound: CPU, bytes per minute, latency, A/V offset (Benchmarks/audio.sh).")

    @Option(help: "The screenpub binary (a release build).")
    var screenpub: String

    @Option(help: "Seconds of silence and of music measured for CPU and bytes.")
    var phaseSeconds: Double = 30

    @Option(help: "Beeps and flashes (one a second) for the A/V offset.")
    var beeps: Int = 60

    @Option(help: "Frames per second captured during the A/V run (a picture's capture time is the tick after the paint).")
    var fps: Int = 30

    /// CPU seconds of screenpub's audio thread (`screenpub-aud`), from /proc.
    static func audioThreadSeconds(_ pid: Int32) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.hasPrefix("screenpub-aud"), let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // utime and stime are fields 14 and 15 of stat; fields[0] here is field 3.
            return (Double(fields[11]) ?? 0) / 100 + (Double(fields[12]) ?? 0) / 100
        }
        return .nan
    }

    func run() async throws {
        let pipewire = try await PrivatePipeWire(busActivation: false)
        defer { pipewire.stop() }
        let display = try await VirtualDisplay(width: 640, height: 360)
        let tone = try PipeWireTestTone(on: pipewire, name: "screenpub-bench-sound", signal: .silence)
        try await tone.waitUntilListed(on: pipewire)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("audiobench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SCREENPUB_") }
        environment["PIPEWIRE_RUNTIME_DIR"] = pipewire.runtimeDirectory
        environment["XDG_STATE_HOME"] = home
        environment["XDG_CONFIG_HOME"] = home
        let share = try ChildProcess(
            screenpub,
            ["--display", display.name, "--audio", tone.name, "--fps", String(fps), "--keepalive", "0.05", "--port", "0", "--control-socket", ""],
            environment: environment)
        defer { share.endInBackground(signal: SIGTERM, timeout: 10) }
        var viewer = ""
        for _ in 0..<400 where viewer.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            viewer = share.outputSoFar.split(separator: "\n").first { $0.hasPrefix("viewer:") }.map { String($0.dropFirst(7)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        guard let url = URL(string: viewer), let token = viewer.split(separator: "token=").last, let port = url.port else {
            throw ValidationError("screenpub printed no viewer link: \(share.errorsSoFar)")
        }
        let received = SoundAndPictures()
        let subscriber = StreamSubscriber(
            transport: WebSocketTransport(url: "ws://127.0.0.1:\(port)/ws"), token: String(token), logger: Logger(label: "bench"))
        let subscription = Task {
            try await subscriber.run(
                audio: true, makeDecoder: { try FrameDecoder(codec: $0) }, makeRenderer: { _ in received.collector() },
                makeSink: { _ in received.collector() })
        }
        defer { subscription.cancel() }
        let clock = MonotonicClock()
        func now() -> Int64 { Int64(clock.nanoseconds(fromTicks: clock.now())) }
        try await Task.sleep(for: .seconds(2))

        // Silence, then music: CPU of the audio thread and bytes a minute.
        for (name, signal) in [("silence", PipeWireTestTone.Signal.silence), ("music", .music)] {
            tone.play(signal)
            try await Task.sleep(for: .seconds(1))
            let (from, cpuBefore) = (now(), Self.audioThreadSeconds(share.processID))
            try await Task.sleep(for: .milliseconds(Int(phaseSeconds * 1000)))
            let (to, cpuAfter) = (now(), Self.audioThreadSeconds(share.processID))
            let frames = received.sounds.value.filter { $0.captureTime >= from && $0.captureTime < to }
            let minutes = Double(to - from) / 60e9
            let bytes = frames.reduce(0) { $0 + $1.bytes + 48 }  // each with its 48-byte header
            let latencies = frames.map { Double($0.arrived - $0.captureTime) / 1e6 }
            let (p50, _, p99, _) = percentiles(latencies)
            print(String(format: "%@: audio thread CPU %.2f %% of a core; %d frames, %.0f bytes/min on the wire (%.1f kbit/s); capture → arrival p50 %.1f ms p99 %.1f ms",
                         name, (cpuAfter - cpuBefore) / (Double(to - from) / 1e9) * 100, frames.count, Double(bytes) / minutes,
                         Double(bytes) * 8 / (Double(to - from) / 1e9) / 1000, p50, p99))
        }

        // Beeps and flashes at the same instants.
        let painter = try XPainter(displayName: display.name)
        let black = XPainter.pixel(red: 0, green: 0, blue: 0)
        let canvas = painter.createWindow(PixelRect(x: 0, y: 0, width: 640, height: 360), color: black)
        let start = clock.nanoseconds(fromTicks: clock.now()) + 1_000_000_000
        // A random phase against the capture ticks each time: a picture's capture time is the tick after the
        // paint, so the offsets spread over a frame interval.
        let instants = (0..<beeps).map { start + UInt64($0) * 1_000_000_000 + UInt64.random(in: 0..<(1_000_000_000 / UInt64(fps))) }
        tone.play(.beeps(frequency: 1000, at: instants, milliseconds: 150))
        try await painter.flash(window: canvas, PixelRect(x: 0, y: 0, width: 640, height: 360), at: instants, clock: clock)
        try await Task.sleep(for: .seconds(1))
        // Pictures come at least every 50 ms (--keepalive 0.05): a longer gap before a flash means dropped frames.
        let offsets = received.offsets(at: instants.map(Int64.init), frameGap: 80_000_000).milliseconds
        let (p50, _, p99, _) = percentiles(offsets)
        let absolute = percentiles(offsets.map(abs))
        print(String(format: "A/V at %d fps: %d of %d flashes paired; audio − video p50 %.1f ms p99 %.1f ms, min %.1f max %.1f; |offset| p50 %.1f ms p99 %.1f ms",
                     fps, offsets.count, beeps, p50, p99, offsets.min() ?? .nan, offsets.max() ?? .nan, absolute.p50, absolute.p99))
    }
}
