import CScreenShims
import Foundation
public import Logging
public import ScreenMedia
public import ServiceLifecycle

/// Runs a capture loop (source → pipeline) as a ServiceLifecycle service on a thread of its own.
///
/// The source and pipeline are made on that thread by `setUp` and never leave it, because display connections
/// and codec contexts belong to one thread. Graceful shutdown (SIGINT/SIGTERM) or cancellation signals the
/// loop to stop; the sinks are then finished (file trailers written) before `run()` returns.
public struct CaptureService: Service {
    public typealias SetUp = @Sendable (_ stop: StopSignal) throws -> (source: any FrameSource, pipeline: CapturePipeline)

    private let framesPerSecond: Double
    private let logger: Logger
    private let setUp: SetUp

    public init(framesPerSecond: Double, logger: Logger, setUp: @escaping SetUp) {
        self.framesPerSecond = framesPerSecond
        self.logger = logger
        self.setUp = setUp
    }

    public func run() async throws {
        let stop = StopSignal()
        let framesPerSecond = self.framesPerSecond
        let setUp = self.setUp
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await runOnDedicatedThread(name: "screenpub-cap") {
                let (source, pipeline) = try setUp(stop)
                var failure: (any Error)?
                do {
                    try source.run(framesPerSecond: framesPerSecond, stop: stop, consumer: pipeline)
                } catch {
                    failure = error
                }
                // Finish the outputs even after a failure: what was recorded stays readable.
                do { try pipeline.finish() } catch { failure = failure ?? error }
                if let failure { throw failure }
            }
        } onCancelOrGracefulShutdown: {
            stop.stop()
        }
        logger.debug("capture loop ended")
    }
}

/// Runs blocking work on a new thread and waits for it without blocking the concurrency pool.
public func runOnDedicatedThread<Result: Sendable>(
    name: String, _ body: @escaping @Sendable () throws -> Result
) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            // Visible in top -H, /proc/PID/task/*/comm and the allocation benchmark (at most 15 bytes).
            CScreenShims_setThreadName(name)
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }
}
