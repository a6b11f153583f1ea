import Foundation
import Logging
import ScreenPipeline
import ScreenMedia
import ServiceLifecycle
import Synchronization

/// Whether the capture thread got as far as capturing, and the error that stopped it otherwise.
final class StartupReport: Sendable {
    private let state = Mutex<(started: Bool, failure: (any Error)?)>((false, nil))
    private let startedEvent = OneShotEvent()

    /// Capture started (perhaps after earlier failures, with `--capture-retry`, which no longer matter).
    func succeed() {
        state.withLock { $0 = (true, nil) }
        startedEvent.signal()
    }
    func fail(_ error: any Error) { state.withLock { $0.failure = error } }
    var didStart: Bool { state.withLock { $0.started } }
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// True once capture has started; false if the task is cancelled first.
    func waitUntilStarted() async -> Bool {
        await startedEvent.wait()
        return didStart
    }
}

/// Shows progress: one live line on a terminal, a plain log line every 10 s otherwise; keeps the rates of the
/// last seconds for `screenpub status`.
struct StatusReporter: Service {
    let statistics: PipelineStatistics
    let logger: Logger
    let interactive: Bool
    /// Encoded frames per second and kbit/s over the last ``window`` seconds.
    let rates = Locked(Rates())

    struct Rates: Sendable {
        var encodedPerSecond = 0.0
        var kilobitsPerSecond = 0.0
    }

    /// Seconds the rates of `screenpub status` are measured over.
    static let window = 5

    func run() async throws {
        // Ends at once when the group shuts down, instead of finishing its sleep.
        await cancelWhenGracefulShutdown { await report() }
    }

    private func report() async {
        var history = [(time: ContinuousClock.now, totals: statistics.snapshot())]
        var previous = history[0]
        let start = previous.time
        var ticks = 0
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(1))
            } catch {
                return
            }
            ticks += 1
            let current = (time: ContinuousClock.now, totals: statistics.snapshot())
            history.append(current)
            if history.count > Self.window + 1 { history.removeFirst() }
            let oldest = history[0]
            let windowSeconds = (current.time - oldest.time) / .seconds(1)
            rates.withLock {
                $0.encodedPerSecond = Double(current.totals.framesEncoded - oldest.totals.framesEncoded) / windowSeconds
                $0.kilobitsPerSecond = Double(current.totals.bytesEncoded - oldest.totals.bytesEncoded) * 8 / 1000 / windowSeconds
            }
            // A log line every 10 s (journald), the live line every second (a terminal).
            guard interactive || ticks % 10 == 0 else { continue }
            let seconds = (current.time - previous.time) / .seconds(1)
            let (now, before) = (current.totals, previous.totals)
            let rate = { (a: Int, b: Int) in String(format: "%.1f", Double(a - b) / seconds) }
            let kbps = Double(now.bytesEncoded - before.bytesEncoded) * 8 / 1000 / seconds
            let elapsed = Int((current.time - start) / .seconds(1))
            let line =
                "captured \(rate(now.framesCaptured, before.framesCaptured)) fps · encoded \(rate(now.framesEncoded, before.framesEncoded)) fps · skipped \(rate(now.framesUnchanged, before.framesUnchanged)) fps · \(String(format: "%.0f", kbps)) kbit/s · \(now.framesEncoded) frames · \(elapsed / 60):\(String(format: "%02d", elapsed % 60))"
            if interactive {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            } else {
                logger.info("\(line)")
            }
            previous = current
        }
    }

    func clearLine() {
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
