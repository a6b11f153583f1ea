import Foundation
import Logging
import ScreenPipeline
import ServiceLifecycle
import Synchronization

/// Whether the capture thread got as far as capturing, and the error that stopped it otherwise.
final class StartupReport: Sendable {
    private let state = Mutex<(started: Bool, failure: (any Error)?)>((false, nil))

    func succeed() { state.withLock { $0.started = true } }
    func fail(_ error: any Error) { state.withLock { $0.failure = error } }
    var didStart: Bool { state.withLock { $0.started } }
    var failure: (any Error)? { state.withLock { $0.failure } }
}

/// Shows progress: one live line on a terminal, a plain log line every 10 s otherwise.
struct StatusReporter: Service {
    let statistics: PipelineStatistics
    let logger: Logger
    let interactive: Bool

    func run() async throws {
        // Ends at once when the group shuts down, instead of finishing its sleep.
        await cancelWhenGracefulShutdown { await report() }
    }

    private func report() async {
        let period: Duration = interactive ? .seconds(1) : .seconds(10)
        var previous = statistics.snapshot()
        var previousTime = ContinuousClock.now
        let start = previousTime
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: period)
            } catch {
                return
            }
            let now = ContinuousClock.now
            let current = statistics.snapshot()
            let seconds = (now - previousTime) / .seconds(1)
            let rate = { (a: Int, b: Int) in String(format: "%.1f", Double(a - b) / seconds) }
            let kbps = Double(current.bytesEncoded - previous.bytesEncoded) * 8 / 1000 / seconds
            let elapsed = Int((now - start) / .seconds(1))
            let line =
                "captured \(rate(current.framesCaptured, previous.framesCaptured)) fps · encoded \(rate(current.framesEncoded, previous.framesEncoded)) fps · skipped \(rate(current.framesUnchanged, previous.framesUnchanged)) fps · \(String(format: "%.0f", kbps)) kbit/s · \(current.framesEncoded) frames · \(elapsed / 60):\(String(format: "%02d", elapsed % 60))"
            if interactive {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            } else {
                logger.info("\(line)")
            }
            previous = current
            previousTime = now
        }
    }

    func clearLine() {
        if interactive { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
