import Foundation
import Logging
public import ScreenCaptureX11
import ScreenCodec
public import ScreenMedia
public import ScreenPipeline
import Synchronization

/// A real capture pipeline (X11 source → libvpx → ``CollectingSink``) running on its own thread, for tests that
/// paint on a display and watch what gets encoded.
public final class LiveCapture: Sendable {
    public let sink = CollectingSink()
    public let statistics = PipelineStatistics()
    private let stopSignal = StopSignal()
    private let outcome = Locked<Result<Void, any Error>?>(nil)
    /// The capture size reported by the source at start.
    public let initialSize: (width: Int, height: Int)

    /// Opens the source on the capture thread and starts it; throws what the source's initializer throws.
    public init(
        options: X11CaptureOptions, framesPerSecond: Double, codec: VideoCodec = .vp9,
        keepaliveInterval: Double? = nil, refineAfter: Double? = nil, metadata: MetadataPolicy = .captureTime,
        pictureRequests: PictureRequests? = nil
    ) async throws {
        let started = Locked<Result<(Int, Int), any Error>?>(nil)
        let (sink, statistics, stop, outcome) = (sink, statistics, stopSignal, outcome)
        let thread = Thread {
            let source: XShmFrameSource
            do {
                source = try XShmFrameSource(options: options, logger: Logger(label: "test-capture"))
                started.withLock { $0 = .success(source.size) }
            } catch {
                started.withLock { $0 = .failure(error) }
                return
            }
            let pipeline = CapturePipeline(
                configuration: .init(
                    metadata: metadata, keepaliveInterval: keepaliveInterval, refineAfter: refineAfter, pictureRequests: pictureRequests),
                encoder: makeVideoEncoder(.init(codec: codec, bitrateKbps: 4000, framesPerSecond: framesPerSecond)),
                sinks: [sink], stop: stop, statistics: statistics)
            let result = Result { try source.run(framesPerSecond: framesPerSecond, stop: stop, consumer: pipeline) }
            try? pipeline.finish()
            outcome.withLock { $0 = result }
        }
        thread.start()
        // Awaited, not waited for on a semaphore: this is a concurrency-pool thread.
        while true {
            if let opened = started.withLock({ $0 }) {
                initialSize = try opened.get()
                break
            }
            do { try await Task.sleep(for: .milliseconds(5)) } catch {
                stop.stop()  // cancelled: the capture thread ends once its source opened
                throw error
            }
        }
    }

    /// Waits until `condition` holds, checking every 20 ms; false on timeout or when capture ended.
    public func wait(timeout: Double = 5, until condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// Waits until the capture loop ended by itself and returns the error it ended with (nil: none or timeout).
    public func waitForFailure(timeout: Double = 5) async -> (any Error)? {
        _ = await wait(timeout: timeout) { outcome.withLock { $0 != nil } }
        guard case .failure(let error) = outcome.withLock({ $0 }) else { return nil }
        return error
    }

    /// Stops capture and waits for the loop to end; rethrows a capture failure.
    public func stop() async throws {
        stopSignal.stop()
        _ = await wait(timeout: 5) { outcome.withLock { $0 != nil } }
        try outcome.withLock { $0 }?.get()
    }

    /// Decodes every collected frame in order and returns the last picture's size and a copy of its pixels.
    public func decodeLast() throws -> VideoFrame? {
        let frames = sink.frames
        guard let codec = frames.first?.codec else { return nil }
        let decoder = try makeVideoDecoder(for: codec)
        var last: VideoFrame?
        for frame in frames {
            try frame.payload.withUnsafeBytes { payload in
                try decoder.decode(payload) { picture in
                    let copy = VideoFrame(width: picture.width, height: picture.height)
                    picture.withUnsafeBytes { source in copy.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
                    last = copy
                }
            }
        }
        return last
    }
}

