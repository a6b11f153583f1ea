public import ScreenMedia
import Synchronization

/// The consumer side of the audio capture: cuts the samples into 20 ms frames, encodes them with Opus and
/// hands them to the audio sinks, all on the audio thread, with no allocation per frame.
///
/// Each frame is stamped with the capture time of the first sample its decoded output plays: the capture time
/// of its first input sample minus the encoder's lookahead (the convention of Matroska's and Ogg's pre-skip),
/// so that sound and pictures line up in every consumer. Sample times follow from counting samples, not from
/// each buffer's own stamp (which jitters with the graph's scheduling): a buffer's stamp only slowly pulls the
/// count along (clock drift), unless it is off by more than ``resynchronizeBeyond`` — samples were lost (this
/// thread fell behind and PipeWire dropped buffers) — which starts the count afresh at the stamp. While the share is paused or muted, samples are
/// dropped before the encoder. In silence Opus makes DTX frames of a byte or two; only one every
/// ``silenceInterval`` is sent (as WebRTC does), so a silent desktop costs about 100 bytes a second.
public final class AudioPipeline: AudioSampleConsumer {
    public let channels: Int
    private let encoder: any AudioEncoder
    private let sinks: AudioSinks
    private let pause: PauseSwitch?
    private let mute: MuteSwitch?
    public let statistics: AudioStatistics
    private let clock = MonotonicClock()
    /// One frame of samples being filled, and how many are in it.
    private var pending: [Float]
    private var filled = 0
    /// The capture time of `pending`'s first sample, in nanoseconds.
    private var pendingStart: Int64 = 0
    private let lookaheadNanoseconds: Int64
    /// The capture time the next sample should have, by count; nil after a pause or at the start.
    private var nextSampleTime: Int64?
    static let resynchronizeBeyond: Int64 = 5_000_000
    /// When the last frame was sent (capture time, ns), to space out DTX frames.
    private var lastSent: Int64?
    static let silenceInterval: Int64 = 400_000_000
    static let sampleRate = 48_000

    public init(
        encoder: any AudioEncoder, sinks: AudioSinks, pause: PauseSwitch? = nil, mute: MuteSwitch? = nil,
        statistics: AudioStatistics = AudioStatistics()
    ) {
        self.encoder = encoder
        self.channels = encoder.channels
        self.sinks = sinks
        self.pause = pause
        self.mute = mute
        self.statistics = statistics
        pending = [Float](repeating: 0, count: encoder.frameSamples * encoder.channels)
        lookaheadNanoseconds = Int64(encoder.lookaheadSamples) * 1_000_000_000 / Int64(Self.sampleRate)
    }

    public func consume(_ samples: UnsafeBufferPointer<Float>, channels: Int, captureTime: MediaTime) throws {
        precondition(channels == self.channels, "the audio source changed its channel count")
        statistics.countCaptured(samples: samples.count / channels)
        if pause?.isPaused == true || mute?.isMuted == true {
            // Nothing kept across a pause: the next frame starts with the next samples.
            filled = 0
            nextSampleTime = nil
            statistics.countMuted(samples: samples.count / channels)
            return
        }
        var start = captureTime.converted(to: MediaTime.nanosecondTimescale).value
        if let expected = nextSampleTime, abs(start - expected) <= Self.resynchronizeBeyond {
            start = expected + (start - expected) / 64
        } else if nextSampleTime != nil {
            // A discontinuity: what was being gathered belongs to the time before it.
            filled = 0
        }
        nextSampleTime = start + Int64(samples.count / channels) * 1_000_000_000 / Int64(Self.sampleRate)
        var offset = 0
        while offset < samples.count {
            if filled == 0 {
                pendingStart = start + Int64(offset / channels) * 1_000_000_000 / Int64(Self.sampleRate)
            }
            let count = min(pending.count - filled, samples.count - offset)
            pending.withUnsafeMutableBufferPointer { buffer in
                _ = UnsafeMutableBufferPointer(rebasing: buffer[filled..<(filled + count)])
                    .initialize(from: UnsafeBufferPointer(rebasing: samples[offset..<(offset + count)]))
            }
            filled += count
            offset += count
            if filled == pending.count {
                filled = 0
                try encodeFrame()
            }
        }
    }

    private func encodeFrame() throws {
        let time = pendingStart - lookaheadNanoseconds
        try pending.withUnsafeBufferPointer { samples in
            try encoder.encode(samples) { packet, isSilence in
                statistics.countEncoded(bytes: packet.count, silence: isSilence)
                if isSilence, let lastSent, time - lastSent < Self.silenceInterval {
                    statistics.countSuppressed()
                    return
                }
                lastSent = time
                // The wall clock at the frame's capture time (not now): subscribers measure latency with it.
                let wallNow = WallClockTime.now()
                let age = Int64(clock.nanoseconds(fromTicks: clock.now())) - time
                let wallNanoseconds = wallNow.secondsSince1970 * 1_000_000_000 + Int64(wallNow.nanoseconds) - max(0, age)
                let frame = EncodedAudioFrame(
                    codec: encoder.codec, payload: packet, channels: channels, samples: encoder.frameSamples,
                    captureTime: MediaTime(value: time, timescale: MediaTime.nanosecondTimescale),
                    wallClock: WallClockTime(
                        secondsSince1970: wallNanoseconds / 1_000_000_000, nanoseconds: Int32(wallNanoseconds % 1_000_000_000)),
                    isSilence: isSilence)
                try sinks.write(frame)
                statistics.countSent(bytes: packet.count)
            }
        }
    }
}

@available(*, unavailable, message: "runs on the audio thread")
extension AudioPipeline: Sendable {}

