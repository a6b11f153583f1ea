import CScreenShims
import Foundation
import Synchronization
public import Logging
public import ScreenMedia
public import ServiceLifecycle

/// Runs a capture loop (source → pipeline) as a ServiceLifecycle service on a thread of its own.
///
/// The sinks, source and pipeline are made on that thread by `setUp` and never leave it, because display
/// connections and codec contexts belong to one thread. Graceful shutdown (SIGINT/SIGTERM) or cancellation
/// signals the loop to stop; the sinks are then finished (file trailers written) before `run()` returns.
///
/// ``restart()`` (a configuration reload) ends the current loop and asks `setUp` for a new source and
/// pipeline, handing it the sinks made the first time: the recording and the relay stream go on, the new
/// encoder starting with a keyframe.
public struct CaptureService: Service {
    /// Makes a source and a pipeline; `sinks` is nil the first time (make them) and then the sinks made then.
    public typealias SetUp = @Sendable (_ sinks: [any EncodedFrameSink]?, _ stop: StopSignal) throws -> CaptureLoop

    /// What runs on the capture thread until stopped or restarted.
    public struct CaptureLoop {
        public var source: any FrameSource
        public var pipeline: CapturePipeline
        public var sinks: [any EncodedFrameSink]
        public var framesPerSecond: Double

        public init(source: any FrameSource, pipeline: CapturePipeline, sinks: [any EncodedFrameSink], framesPerSecond: Double) {
            self.source = source
            self.pipeline = pipeline
            self.sinks = sinks
            self.framesPerSecond = framesPerSecond
        }
    }

    private let logger: Logger
    private let setUp: SetUp
    private let control = LoopControl()

    public init(logger: Logger, setUp: @escaping SetUp) {
        self.logger = logger
        self.setUp = setUp
    }

    /// Ends the current capture loop and starts a new one from `setUp` (new settings), keeping the sinks.
    public func restart() { control.restart() }

    public func run() async throws {
        let setUp = self.setUp
        let control = self.control
        let logger = self.logger
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await runOnDedicatedThread(name: "screenpub-cap") {
                var loop = try setUp(nil, control.begin())
                while true {
                    var failure: (any Error)?
                    do {
                        try loop.source.run(framesPerSecond: loop.framesPerSecond, stop: control.current, consumer: loop.pipeline)
                    } catch {
                        failure = error
                    }
                    if failure == nil, control.takeRestart() {
                        do {
                            loop = try setUp(loop.sinks, control.begin())
                            continue
                        } catch {
                            logger.error("cannot restart the capture with the new settings: \(error)")
                            failure = error
                        }
                    }
                    // Finish the outputs even after a failure: what was recorded stays readable.
                    do { try loop.pipeline.finish() } catch { failure = failure ?? error }
                    if let failure { throw failure }
                    return
                }
            }
        } onCancelOrGracefulShutdown: {
            control.stopForGood()
        }
        logger.debug("capture loop ended")
    }
}

/// The stop signal of the current capture loop, and whether its end is a restart or the end.
private final class LoopControl: Sendable {
    private let state = Mutex<(current: StopSignal, restart: Bool, finished: Bool)>((StopSignal(), false, false))

    var current: StopSignal { state.withLock { $0.current } }

    /// A fresh stop signal for a new loop (already stopped if the service is shutting down).
    func begin() -> StopSignal {
        state.withLock { state in
            state.current = StopSignal()
            if state.finished { state.current.stop() }
            return state.current
        }
    }

    func restart() {
        state.withLock { state in
            guard !state.finished else { return }
            state.restart = true
            state.current.stop()
        }
    }

    func takeRestart() -> Bool {
        state.withLock { state in
            defer { state.restart = false }
            return state.restart && !state.finished
        }
    }

    func stopForGood() {
        state.withLock { state in
            state.finished = true
            state.current.stop()
        }
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
