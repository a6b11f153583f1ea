import Foundation
import Logging
import ScreenCapturePipeWire
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import Synchronization

/// The share's sound: a PipeWire capture stream and an Opus encoder on a thread of their own (`screenpub-aud`),
/// feeding the share's sinks that carry audio, beside the capture thread's video.
///
/// ``start(_:pause:logger:)`` connects and waits until PipeWire has linked the stream (so the channel count
/// the destinations announce is known) and fails with a message a user can act on. Once running, a failure
/// (the daemon stopped) ends the sound, not the share: it is logged and viewers see the stream without sound.
final class AudioCapture: Sendable {
    let settings: AudioSettings
    let properties: AudioProperties
    /// The encoder's lookahead: a file's pre-skip.
    let preSkip: Int
    let sinks = AudioSinks()
    let mute = MuteSwitch()
    let statistics = AudioStatistics()
    private let stop = StopSignal()
    private let latency = Atomic<Int>(-1)

    private init(settings: AudioSettings, channels: Int, preSkip: Int) {
        self.settings = settings
        properties = AudioProperties(channels: channels)
        self.preSkip = preSkip
    }

    /// The measured time from a sample reaching the capture stream to its delivery, in ms (nil before any).
    var captureLatencyMilliseconds: Double? {
        let value = latency.load(ordering: .relaxed)
        return value < 0 ? nil : Double(value) / 10
    }

    /// Starts capturing; throws ``ShareError`` (`cannotStart`) when there is no PipeWire or no such input.
    static func start(_ settings: AudioSettings, pause: PauseSwitch, logger: Logger) async throws(ShareError) -> AudioCapture {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    nameCurrentThread("screenpub-aud")
                    let source: PipeWireAudioSource
                    let capture: AudioCapture
                    let pipeline: AudioPipeline
                    do {
                        source = try PipeWireAudioSource(options: PipeWireAudioOptions(remote: settings.remote, input: settings.input), logger: logger)
                        let encoder = try OpusAudioEncoder(
                            configuration: .init(channels: source.channels, bitsPerSecond: settings.bitrateKbps * 1000))
                        capture = AudioCapture(settings: settings, channels: source.channels, preSkip: encoder.lookaheadSamples)
                        pipeline = AudioPipeline(encoder: encoder, sinks: capture.sinks, pause: pause, mute: capture.mute, statistics: capture.statistics)
                    } catch {
                        continuation.resume(throwing: error)
                        return
                    }
                    continuation.resume(returning: capture)
                    do {
                        try source.run(stop: capture.stop, consumer: LatencyReporting(pipeline, source: source, capture: capture))
                    } catch {
                        logger.error("the sound stopped: \(error); the screen is still shared, without sound")
                    }
                }
                thread.name = "screenpub-aud"
                thread.stackSize = 1 << 20
                thread.start()
            }
        } catch let error as ScreenError<PipeWireCaptureFailure> {
            // Its messages name what could not be captured.
            throw ShareError(.cannotStart, error.message)
        } catch {
            throw ShareError(.cannotStart, "cannot share sound: \(error)")
        }
    }

    fileprivate func report(latencyMilliseconds: Double) {
        latency.store(Int((latencyMilliseconds * 10).rounded()), ordering: .relaxed)
    }

    /// Stops the capture; its thread lets go of PipeWire within 100 ms.
    func stopCapturing() {
        stop.stop()
    }
}

/// Hands samples to the pipeline and publishes the source's measured latency for `screenpub status`.
private final class LatencyReporting: AudioSampleConsumer {
    private let pipeline: AudioPipeline
    private let source: PipeWireAudioSource
    private let capture: AudioCapture

    init(_ pipeline: AudioPipeline, source: PipeWireAudioSource, capture: AudioCapture) {
        self.pipeline = pipeline
        self.source = source
        self.capture = capture
    }

    func consume(_ samples: UnsafeBufferPointer<Float>, channels: Int, captureTime: MediaTime) throws {
        try pipeline.consume(samples, channels: channels, captureTime: captureTime)
        if let latency = source.captureLatencyMilliseconds { capture.report(latencyMilliseconds: latency) }
    }
}
