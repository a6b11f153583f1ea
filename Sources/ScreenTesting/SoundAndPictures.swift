import Foundation
import ScreenCodec
public import ScreenMedia

/// What a subscriber received of a stream with sound, for tests and benchmarks: every audio frame decoded (with
/// libopus) and the brightness of every picture, with their capture times and when they arrived (monotonic ns).
/// ``collector()`` makes the sink and renderer a subscription writes into; ``offsets(at:)`` pairs beeps with
/// flashes painted at the same instants.
public final class SoundAndPictures: Sendable {
    public struct Sound: Sendable {
        public var captureTime: Int64
        public var arrived: Int64
        public var bytes: Int
        public var silence: Bool
        public var channels: Int
        /// Interleaved, as decoded.
        public var samples: [Float]
    }

    public struct Picture: Sendable {
        public var captureTime: Int64
        public var arrived: Int64
        /// Of the pixel at a quarter of the width and height (away from the X server's pointer in the middle).
        public var brightness: Double
    }

    public let sounds = Locked<[Sound]>([])
    public let pictures = Locked<[Picture]>([])

    public init() {}

    /// A sink and renderer for one subscription (made on its task) that records into this.
    public func collector() -> Collector { Collector(self) }

    public final class Collector: EncodedFrameSink, EncodedAudioSink, VideoRenderer {
        let received: SoundAndPictures
        var decoder: OpusAudioDecoder?
        let clock = MonotonicClock()

        init(_ received: SoundAndPictures) { self.received = received }

        var now: Int64 { Int64(clock.nanoseconds(fromTicks: clock.now())) }

        public func write(_ frame: EncodedFrame) throws {}
        public func finish() throws {}

        /// The decoder for `channels`, made anew when the channel count changes.
        private func decoder(channels: Int) throws -> OpusAudioDecoder {
            if let decoder, decoder.channels == channels { return decoder }
            let made = try OpusAudioDecoder(channels: channels)
            decoder = made
            return made
        }

        public func writeAudio(_ frame: EncodedAudioFrame) throws {
            let opus = try decoder(channels: frame.channels)
            let samples = try opus.decode(frame.payload) { Array($0) }
            let sound = Sound(
                captureTime: frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value, arrived: now,
                bytes: frame.payload.count, silence: frame.isSilence, channels: frame.channels, samples: samples)
            received.sounds.withLock { $0.append(sound) }
        }

        public func render(_ frame: VideoFrame) throws {
            let pixel = frame.pixel(x: frame.width / 4, y: frame.height / 4)
            let picture = Picture(
                captureTime: frame.captureTime.converted(to: MediaTime.nanosecondTimescale).value, arrived: now,
                brightness: (Double(pixel.r) + Double(pixel.g) + Double(pixel.b)) / 3)
            received.pictures.withLock { $0.append(picture) }
        }
    }

    /// The left channel of `sounds`, end to end.
    public static func left(_ sounds: [Sound]) -> [Float] {
        sounds.flatMap { sound in stride(from: 0, to: sound.samples.count, by: sound.channels).map { sound.samples[$0] } }
    }

    /// For beeps and white flashes that started together at `instants` (monotonic ns): the first bright picture
    /// and the first loud decoded sample near each (by capture time, the sample's place in its frame counted),
    /// and audio − video in ms for each instant where both were found. With `frameGap`, a flash whose picture
    /// comes more than that after the one before is left out: frames were dropped (a subscriber that fell behind
    /// waits for a keyframe), so it is not where the flash began.
    public func offsets(at instants: [Int64], frameGap: Int64? = nil) -> (flashes: Int, beeps: Int, milliseconds: [Double]) {
        let pictures = self.pictures.value, sounds = self.sounds.value
        var flashes = 0, beeps = 0
        var offsets: [Double] = []
        for instant in instants {
            let window = (instant - 200_000_000)..<(instant + 500_000_000)
            var flash: Int64?
            if let index = pictures.firstIndex(where: { window.contains($0.captureTime) && $0.brightness > 128 }) {
                let gap = index > 0 ? pictures[index].captureTime - pictures[index - 1].captureTime : .max
                if frameGap.map({ gap <= $0 }) ?? true { flash = pictures[index].captureTime }
            }
            var onset: Int64?
            search: for sound in sounds where window.contains(sound.captureTime) {
                for index in stride(from: 0, to: sound.samples.count, by: sound.channels) where abs(sound.samples[index]) > 0.1 {
                    onset = sound.captureTime + Int64(index / sound.channels) * 1_000_000_000 / 48_000
                    break search
                }
            }
            if flash != nil { flashes += 1 }
            if onset != nil { beeps += 1 }
            if let flash, let onset { offsets.append(Double(onset - flash) / 1e6) }
        }
        return (flashes, beeps, offsets)
    }
}
