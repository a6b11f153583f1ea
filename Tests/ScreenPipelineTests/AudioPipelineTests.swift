import Foundation
import ScreenCodec
import ScreenMedia
import ScreenPipeline
import ScreenTesting
import Testing

/// The audio thread's pipeline with the real Opus encoder and a collecting sink (a named test double: the sinks
/// of a share are a relay connection and a file): framing, capture times, silence spacing, mute, resynchronising.
@Suite(.watchdog()) struct AudioPipelineTests {
    /// Records what the pipeline sends.
    final class CollectingAudioSink: ConcurrentAudioSink {
        let frames = Locked<[(time: Int64, bytes: Int, silence: Bool)]>([])
        func writeAudio(_ frame: EncodedAudioFrame) throws {
            frames.withLock { $0.append((frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value, frame.payload.count, frame.isSilence)) }
        }
    }

    /// Feeds `seconds` of stereo (a tone, or silence) in buffers of `bufferSamples`, each stamped with its own
    /// capture time plus `jitter(index)` ns, starting at `start` ns.
    func feed(
        _ pipeline: AudioPipeline, seconds: Double, tone: Bool, start: Int64 = 1_000_000_000, bufferSamples: Int = 480,
        jitter: (Int) -> Int64 = { _ in 0 }
    ) throws {
        let buffers = Int(seconds * 48_000) / bufferSamples
        var samples = [Float](repeating: 0, count: bufferSamples * 2)
        for index in 0..<buffers {
            for sample in 0..<bufferSamples {
                let phase = 2 * Double.pi * 440 * Double(index * bufferSamples + sample) / 48_000
                let value = tone ? Float(0.4 * sin(phase)) : 0
                samples[2 * sample] = value
                samples[2 * sample + 1] = value
            }
            let time = start + Int64(index * bufferSamples) * 1_000_000_000 / 48_000 + jitter(index)
            try samples.withUnsafeBufferPointer {
                try pipeline.consume($0, channels: 2, captureTime: MediaTime(value: time, timescale: MediaTime.nanosecondTimescale))
            }
        }
    }

    func pipeline(_ sink: CollectingAudioSink, mute: MuteSwitch? = nil) throws -> (AudioPipeline, lookahead: Int64) {
        let encoder = try OpusAudioEncoder()
        let lookahead = Int64(encoder.lookaheadSamples) * 1_000_000_000 / 48_000
        return (AudioPipeline(encoder: encoder, sinks: AudioSinks([sink]), mute: mute), lookahead)
    }

    @Test func framesAre20MsApartOnTheSampleCountEvenWhenStampsJitter() throws {
        let sink = CollectingAudioSink()
        let (pipeline, lookahead) = try pipeline(sink)
        // Stamps off by up to ±2 ms (the graph's scheduling; more than 5 ms apart would mean lost samples):
        // frames still follow the sample count from the first stamp.
        let jitter: (Int) -> Int64 = { Int64(($0 * 7919) % 5 - 2) * 1_000_000 }
        try feed(pipeline, seconds: 1, tone: true, jitter: jitter)
        let frames = sink.frames.value
        #expect(frames.count == 50)
        #expect(frames.first?.time == 1_000_000_000 + jitter(0) - lookahead, "the first sample the decoded frame plays")
        let steps = zip(frames.dropFirst(), frames).map { Double($0.time - $1.time) / 1e6 }
        #expect(steps.allSatisfy { abs($0 - 20) < 0.2 }, "\(steps)")
    }

    @Test func lostSamplesRestartTheCountAtTheStamp() throws {
        let sink = CollectingAudioSink()
        let (pipeline, lookahead) = try pipeline(sink)
        try feed(pipeline, seconds: 0.5, tone: true)
        // 100 ms later than the count says: samples were lost.
        try feed(pipeline, seconds: 0.5, tone: true, start: 1_600_000_000)
        let times = sink.frames.value.map(\.time)
        #expect(times.contains(1_600_000_000 - lookahead), "\(times)")
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 - $1 >= 20_000_000 })
    }

    @Test func silenceSendsADTXFrameEvery400MsAndMuteSendsNothing() throws {
        let sink = CollectingAudioSink()
        let mute = MuteSwitch()
        let (pipeline, _) = try pipeline(sink, mute: mute)
        try feed(pipeline, seconds: 2, tone: false)
        // After the encoder settles into DTX (its first frames), 1.5 s of silence: one frame every 400 ms.
        let silent = sink.frames.value.filter { $0.time > 1_500_000_000 }
        #expect(silent.allSatisfy { $0.silence && $0.bytes <= 3 })
        #expect((3...4).contains(silent.count), "\(silent.count) frames for 1.5 s of silence")
        mute.set(muted: true)
        let before = sink.frames.value.count
        try feed(pipeline, seconds: 1, tone: true, start: 3_000_000_000)
        #expect(sink.frames.value.count == before)
        #expect(pipeline.statistics.snapshot().samplesMuted == 48_000)
        mute.set(muted: false)
        try feed(pipeline, seconds: 0.2, tone: true, start: 4_000_000_000)
        #expect(sink.frames.value.count == before + 10)
    }
}
