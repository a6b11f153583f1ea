import Foundation
import ScreenCodec
import ScreenTesting
import Testing

/// libopus through our encoder and decoder: a tone comes back at its frequency, silence costs next to
/// nothing (DTX), the bit rate is the one asked for, a lost packet is concealed or rebuilt from FEC.
@Suite(.watchdog()) struct OpusCodecTests {
    /// `frames` 20 ms stereo frames of a sine at `frequency` Hz (amplitude 0.5), or silence for 0.
    static func tone(_ frequency: Double, frames: Int) -> [[Float]] {
        (0..<frames).map { frame in
            (0..<OpusAudioEncoder.frameSamples).flatMap { sample -> [Float] in
                let time = Double(frame * OpusAudioEncoder.frameSamples + sample) / Double(OpusAudioEncoder.sampleRate)
                let value = Float(0.5 * sin(2 * Double.pi * frequency * time))
                return [value, value]
            }
        }
    }

    /// Packets for `frames`, each with whether the encoder called it silence.
    static func encode(_ frames: [[Float]], _ configuration: OpusAudioEncoder.Configuration = .init()) throws -> [(bytes: [UInt8], silence: Bool)] {
        let encoder = try OpusAudioEncoder(configuration: configuration)
        var packets: [(bytes: [UInt8], silence: Bool)] = []
        for frame in frames {
            try frame.withUnsafeBufferPointer { samples in try encoder.encode(samples) { packets.append((Array($0), $1)) } }
        }
        return packets
    }

    /// The frequency of the left channel by its zero crossings (upward), over `samples`.
    static func frequency(_ interleaved: [Float]) -> Double {
        let left = stride(from: 0, to: interleaved.count, by: 2).map { interleaved[$0] }
        var crossings: [Int] = []
        for index in 1..<left.count where left[index - 1] < 0 && left[index] >= 0 { crossings.append(index) }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * Double(OpusAudioEncoder.sampleRate) / Double(last - first)
    }

    @Test func aToneComesBackAtItsFrequency() throws {
        let packets = try Self.encode(Self.tone(440, frames: 50))
        let decoder = try OpusAudioDecoder(channels: 2)
        var decoded: [Float] = []
        for packet in packets {
            try packet.bytes.withUnsafeBytes { bytes in try decoder.decode(bytes) { decoded += $0 } }
        }
        #expect(decoded.count == 50 * OpusAudioEncoder.frameSamples * 2)
        // After the codec's start-up (the first 100 ms), within 2 %.
        let measured = Self.frequency(Array(decoded.dropFirst(2 * 4800)))
        #expect(abs(measured - 440) / 440 < 0.02, "\(measured) Hz")
        let peak = decoded.dropFirst(2 * 4800).map(abs).max() ?? 0
        #expect(peak > 0.4 && peak < 0.6, "amplitude \(peak)")
    }

    @Test func silenceCostsNextToNothing() throws {
        let packets = try Self.encode(Self.tone(0, frames: 100))
        // After a few frames DTX takes over: a byte or two a frame, marked as silence.
        let settled = packets.dropFirst(10)
        #expect(settled.allSatisfy { $0.silence && $0.bytes.count <= 3 }, "\(settled.map(\.bytes.count))")
        let tone = try Self.encode(Self.tone(440, frames: 100))
        #expect(tone.dropFirst(10).allSatisfy { !$0.silence })
    }

    @Test(arguments: [32_000, 64_000, 128_000])
    func theBitRateIsTheOneAskedFor(bitsPerSecond: Int) throws {
        // Noise: the budget is used (variable rate: within a quarter of it).
        var generator = SeededRandomNumberGenerator()
        let noise = (0..<100).map { _ in (0..<(OpusAudioEncoder.frameSamples * 2)).map { _ in Float.random(in: -0.5...0.5, using: &generator) } }
        let packets = try Self.encode(noise, .init(bitsPerSecond: bitsPerSecond, dtx: false))
        let rate = Double(packets.dropFirst(10).map(\.bytes.count).reduce(0, +) * 8) / (Double(packets.count - 10) * 0.02)
        #expect(abs(rate - Double(bitsPerSecond)) / Double(bitsPerSecond) < 0.25, "\(Int(rate)) bit/s for \(bitsPerSecond) (noise of \(generator))")
    }

    @Test func aLostPacketIsConcealedOrRebuiltFromTheNext() throws {
        let packets = try Self.encode(Self.tone(440, frames: 30), .init(expectedLossPercent: 20))
        let decoder = try OpusAudioDecoder(channels: 2)
        for packet in packets.prefix(20) { try packet.bytes.withUnsafeBytes { bytes in try decoder.decode(bytes) { _ in } } }
        // Packet 20 is lost: rebuilt from packet 21's FEC, a whole frame of the tone.
        let rebuilt = try packets[21].bytes.withUnsafeBytes { bytes in try decoder.decode(bytes, fromNextPacket: true) { Array($0) } }
        #expect(rebuilt.count == OpusAudioEncoder.frameSamples * 2)
        #expect((rebuilt.map(abs).max() ?? 0) > 0.2, "the rebuilt frame carries the tone")
        // A loss with nothing after it is concealed (a frame of plausible sound, not an error).
        let concealed = try decoder.decode(nil) { Array($0) }
        #expect(concealed.count == OpusAudioEncoder.frameSamples * 2)
    }

    @Test func badSettingsAreClearErrors() {
        #expect { try OpusAudioEncoder(configuration: .init(channels: 6)) } throws: { "\($0)".contains("mono or stereo") }
        #expect { try OpusAudioEncoder(configuration: .init(bitsPerSecond: 1_000)) } throws: { "\($0)".contains("6 to 510 kbit/s") }
        #expect(throws: (any Error).self) {
            let encoder = try OpusAudioEncoder()
            try [Float](repeating: 0, count: 100).withUnsafeBufferPointer { try encoder.encode($0) { _, _ in } }
        }
    }
}
