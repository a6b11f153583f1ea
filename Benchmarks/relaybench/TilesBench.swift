import ArgumentParser
import Foundation
import ScreenCodec
import ScreenMedia

/// What finding damage by comparison costs (`TileDiff`, used when a compositor sends no damage metadata) next
/// to what it can save: converting the whole picture to I420. Each measurement cycles through four picture
/// pairs (64 MB at 1080p, twice this machine's L3), so memory is read cold, as a new compositor buffer is.
struct TilesBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiles", abstract: "Time the tile comparison of two pictures against a whole-picture I420 conversion.")

    @Option(help: "Picture size, WIDTHxHEIGHT.")
    var size = "1920x1080"

    @Option(help: "Repetitions of each measurement (the median is printed).")
    var repetitions = 200

    func run() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw ValidationError("--size must be WIDTHxHEIGHT") }
        let (width, height) = (parts[0], parts[1])
        let pairs = (0..<4).map { seed in
            let previous = VideoFrame(width: width, height: height)
            previous.withUnsafeMutableBytes { bytes in
                for index in 0..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: (index &+ seed) &* 2654435761 >> 13) }
            }
            let current = VideoFrame(width: width, height: height)
            previous.withUnsafeBytes { source in current.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
            return (previous, current)
        }
        let converter = try PictureConverter(width: width, height: height)
        var rects: [PixelRect] = []
        rects.reserveCapacity(4096)
        let clock = ContinuousClock()
        var turn = 0

        func median(_ body: (VideoFrame, VideoFrame) -> Void) -> Double {
            var samples: [Double] = []
            for _ in 0..<repetitions {
                let (previous, current) = pairs[turn % pairs.count]
                turn += 1
                let elapsed = clock.measure { body(previous, current) }
                samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            return samples.sorted()[samples.count / 2]
        }
        func compare(_ previous: VideoFrame, _ current: VideoFrame) {
            rects.removeAll(keepingCapacity: true)
            previous.withUnsafeBytes { before in
                current.withUnsafeBytes { after in
                    _ = TileDiff.changedRects(
                        previous: before.baseAddress!, previousStride: previous.bytesPerRow, current: after.baseAddress!,
                        currentStride: current.bytesPerRow, width: width, height: height, into: &rects)
                }
            }
        }
        func change(_ body: (VideoFrame) -> Void) { for (_, current) in pairs { body(current) } }

        let unchanged = median(compare)
        let unchangedRects = rects.count
        // A ticking clock: one 64×16 area in the middle changes.
        change { current in
            current.withUnsafeMutableBytes { bytes in
                for row in (height / 2)..<(height / 2 + 16) {
                    for column in (width / 2)..<(width / 2 + 64) { bytes[row * current.bytesPerRow + column * 4] ^= 0xFF }
                }
            }
        }
        let clockTick = median(compare)
        let clockShapes = rects.map { "\($0.width)×\($0.height)" }.joined(separator: ", ")
        // Everything changed (in the first bytes of every tile row: the quickest exit).
        change { current in
            current.withUnsafeMutableBytes { bytes in for index in stride(from: 0, to: bytes.count, by: 4) { bytes[index] ^= 0x55 } }
        }
        let everything = median(compare)
        let everythingRects = rects.count
        let conversion = median { _, current in converter.convertAll(current) }
        print("\(width)×\(height), median of \(repetitions), memory read cold:")
        print("")
        print("| work | ms per frame | rectangles |")
        print("|---|---:|---:|")
        print(String(format: "| compare, nothing changed | %.3f |", unchanged) + " \(unchangedRects) |")
        print(String(format: "| compare, a 64×16 clock changed | %.3f |", clockTick) + " \(clockShapes) |")
        print(String(format: "| compare, everything changed | %.3f |", everything) + " \(everythingRects) |")
        print(String(format: "| BGRA → I420 of the whole picture (libyuv) | %.3f | |", conversion))
    }
}
