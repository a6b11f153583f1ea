import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
    private let retry: Retry?

    /// When the capture cannot start or stops with an error that may pass (the X server not there yet, or
    /// gone and coming back), try again after `delay` seconds instead of ending: the sinks (the relay stream,
    /// the recording) stay open meanwhile.
    public struct Retry: Sendable {
        public var delay: Double
        public var isRetryable: @Sendable (any Error) -> Bool

        public init(delay: Double, isRetryable: @escaping @Sendable (any Error) -> Bool) {
            self.delay = delay
            self.isRetryable = isRetryable
        }
    }

    public init(logger: Logger, retry: Retry? = nil, setUp: @escaping SetUp) {
        self.logger = logger
        self.retry = retry
        self.setUp = setUp
    }

    /// Ends the current capture loop and starts a new one from `setUp` (new settings), keeping the sinks.
    public func restart() { control.restart() }

    /// Ends the capture for good: the sinks are finished and ``run()`` returns.
    public func stop() { control.stopForGood() }

    /// Whether the capture is waiting to try again (see ``Retry``).
    public var isWaitingToRetry: Bool { control.isWaiting }

    public func run() async throws {
        let setUp = self.setUp
        let control = self.control
        let logger = self.logger
        let retry = self.retry
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await runOnDedicatedThread(name: "screenpub-cap") {
                var sinks: [any EncodedFrameSink]?
                var loop: CaptureLoop?
                var failure: (any Error)?
                while !control.isFinished {
                    do {
                        if loop == nil {
                            loop = try setUp(sinks, control.begin())
                            sinks = loop?.sinks
                        }
                        guard let running = loop else { break }
                        try running.source.run(framesPerSecond: running.framesPerSecond, stop: control.current, consumer: running.pipeline)
                        // Stopped: for good, or to start again with new settings (keeping the sinks).
                        guard control.takeRestart() else { break }
                        loop = nil
                    } catch {
                        guard let retry, retry.isRetryable(error), !control.isFinished else {
                            failure = error
                            break
                        }
                        // Drop the source and encoder (their display is gone); keep the sinks.
                        loop = nil
                        logger.warning("\(error); trying again in \(retry.delay) s")
                        control.wait(seconds: retry.delay)
                    }
                }
                // Finish the outputs even after a failure: what was recorded stays readable.
                if let sinks {
                    do { try CapturePipeline.finish(sinks) } catch { failure = failure ?? error }
                }
                if let failure { throw failure }
            }
        } onCancelOrGracefulShutdown: {
            control.stopForGood()
        }
        logger.debug("capture loop ended")
    }
}

/// The stop signal of the current capture loop, and whether its end is a restart or the end.
private final class LoopControl: Sendable {
    private struct State {
        var current = StopSignal()
        var restart = false
        var finished = false
        /// Wakes the capture thread from a retry wait (a stop or a restart) without it polling.
        var waking: DispatchSemaphore?
    }
    private let state = Mutex(State())

    var current: StopSignal { state.withLock { $0.current } }
    var isFinished: Bool { state.withLock { $0.finished } }
    var isWaiting: Bool { state.withLock { $0.waking != nil } }

    /// Sleeps on the capture thread for up to `seconds`, waking early on a stop or restart.
    func wait(seconds: Double) {
        let signal = begin()
        let waking = DispatchSemaphore(value: 0)
        state.withLock { $0.waking = waking }
        defer { state.withLock { $0.waking = nil } }
        guard !signal.isStopped else { return }
        _ = waking.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
    }

    /// A fresh stop signal for a new loop (already stopped if the service is shutting down).
    func begin() -> StopSignal {
        state.withLock { state in
            state.current = StopSignal()
            // The new loop takes the latest settings: a restart asked for before it is done.
            state.restart = false
            if state.finished { state.current.stop() }
            return state.current
        }
    }

    func restart() {
        state.withLock { state in
            guard !state.finished else { return }
            state.restart = true
            state.current.stop()
            state.waking?.signal()
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
            state.waking?.signal()
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
            nameCurrentThread(name)
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// Names the calling thread (the kernel keeps 15 bytes). Glibc's pthread_setname_np and prctl are not
/// importable into Swift (a _GNU_SOURCE declaration and a variadic), so the name is written where they write it.
public func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
}
