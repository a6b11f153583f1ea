import ScreenMedia
import ScreenTesting
import Testing

@testable import ScreenCodec

/// Under a target that follows the link, a page of text goes in parts: a coarse frame, then the unchanged picture
/// coded finer at the ticks after it, each part within about a tick of the link, until the parts stop.
@Suite(.watchdog()) struct RefinementInPartsTests {
    /// Mean absolute difference of the colour channels of two BGRA pictures of one size.
    static func difference(_ shown: VideoFrame, _ page: VideoFrame) -> Double {
        var total = 0
        shown.withUnsafeBytes { shownBytes in
            page.withUnsafeBytes { pageBytes in
                for row in 0..<page.height {
                    for column in 0..<page.width {
                        for channel in 0..<3 {
                            let shownByte = shownBytes[row * shown.bytesPerRow + column * 4 + channel]
                            let pageByte = pageBytes[row * page.bytesPerRow + column * 4 + channel]
                            total += abs(Int(shownByte) - Int(pageByte))
                        }
                    }
                }
            }
        }
        return Double(total) / Double(page.width * page.height * 3)
    }

    /// Pages every half second at 5 fps (a page, then one or two unchanged ticks), then a page that stays: the
    /// parts after it are each within about a tick of the link, each shows the page more faithfully than the
    /// frames before it, and they stop after at most ``RefinementSteps/mostSteps``. One layer: VP9 refines only
    /// changes in layer 0 (its LAST slot), AV1 in any.
    @Test(arguments: [VideoCodec.av1, .vp9])
    func aPageGoesInPartsEachWithinATickOfTheLink(codec: VideoCodec) async throws {
        let pages = try await LinkFollowingTests.textPages()
        let encoder = RealtimeEncoder(configuration: .init(codec: codec, bitrateKbps: 1500, framesPerSecond: 5, followsNetwork: true))
        try encoder.setTargetBitrate(kbps: 800)
        #expect(encoder.refinesInParts)
        let decoder = try FrameDecoder(codec: codec)
        var tick = 0
        func code(_ page: VideoFrame, change: Bool) throws -> (bytes: Int, difference: Double?) {
            page.captureTime = MediaTime(value: Int64(tick * 200), timescale: 1000)
            tick += 1
            let sink = CollectingSink()
            if change {
                page.markAllChanged()
                try encoder.encode(page) { try sink.write($0) }
            } else {
                page.changedRects.removeAll()
                try encoder.refine(page) { try sink.write($0) }
            }
            var difference: Double?
            for frame in sink.frames {
                try frame.payload.withUnsafeBytes { payload in try decoder.decode(payload) { difference = Self.difference($0, page) } }
            }
            return (sink.frames.map(\.payload.count).reduce(0, +), difference)
        }
        var settled: [Int] = []
        for (index, page) in pages[0..<16].enumerated() {
            let sizes = try [code(page, change: true).bytes] + (0..<(1 + index % 2)).map { _ in try code(page, change: false).bytes }
            if index >= 8 { settled += sizes.filter { $0 > 0 } }
        }
        let tickBytes = 800 * RateControl.partMilliseconds / 8
        #expect(settled.allSatisfy { $0 <= tickBytes * 3 / 2 }, "pages and their parts, once settled: \(settled); a tick of the link is \(tickBytes) bytes")

        let page = pages[16]
        let coarse = try code(page, change: true)
        var parts: [(bytes: Int, difference: Double?)] = []
        while encoder.hasUnrefinedChanges, parts.count <= RefinementSteps.mostSteps { parts.append(try code(page, change: false)) }
        #expect(!parts.isEmpty && parts.count <= RefinementSteps.mostSteps, "\(parts.count) parts")
        let differences = [coarse.difference] + parts.map(\.difference)
        #expect(zip(differences, differences.dropFirst()).allSatisfy { before, after in (after ?? .infinity) <= (before ?? 0) + 0.01 }, "each part shows the page at least as faithfully as before: \(differences)")
        #expect((differences.last ?? nil).map { $0 < (coarse.difference ?? 0) } == true, "the parts show it more faithfully: \(differences)")
        #expect(parts.allSatisfy { $0.bytes <= tickBytes * 3 / 2 }, "parts: \(parts.map(\.bytes)); a tick of the link is \(tickBytes) bytes")
        #expect(try code(page, change: false).bytes == 0, "no part after the last")
    }

    /// Three layers (AV1): a change above layer 0 is refined in its layer, predicting from it; the stream thinned
    /// to layer 0, to layers 0 and 1, or whole, decodes, and each shows the newest page it was sent.
    @Test func partsOfChangesAboveLayerZeroThinWithThem() async throws {
        let pages = try await LinkFollowingTests.textPages()
        let encoder = RealtimeEncoder(configuration: .init(codec: .av1, bitrateKbps: 1500, framesPerSecond: 5, temporalLayers: 3, followsNetwork: true))
        try encoder.setTargetBitrate(kbps: 800)
        var sent: [(page: Int, frame: CollectedFrame, part: Bool)] = []
        for (index, page) in pages[0..<12].enumerated() {
            page.captureTime = MediaTime(value: Int64(sent.count * 200), timescale: 1000)
            page.markAllChanged()
            let sink = CollectingSink()
            try encoder.encode(page) { try sink.write($0) }
            sent += sink.frames.map { (index, $0, false) }
            page.changedRects.removeAll()
            for _ in 0..<2 where encoder.hasUnrefinedChanges {
                page.captureTime = MediaTime(value: Int64(sent.count * 200), timescale: 1000)
                let parts = CollectingSink()
                try encoder.refine(page) { try parts.write($0) }
                sent += parts.frames.map { (index, $0, true) }
            }
        }
        let partLayers = Set(sent.filter(\.part).map(\.frame.temporalLayer))
        #expect(partLayers.count > 1, "parts in more than one layer: \(partLayers)")
        for highest in 0...2 {
            let decoder = try FrameDecoder(codec: .av1)
            for (index, frame, _) in sent where frame.temporalLayer <= highest {
                try frame.payload.withUnsafeBytes { payload in
                    try decoder.decode(payload) { shown in
                        let (own, other) = (Self.difference(shown, pages[index]), Self.difference(shown, pages[(index + 1) % 12]))
                        #expect(own < other / 2, "layers 0…\(highest), page \(index): \(own) from it, \(other) from the next")
                    }
                }
            }
        }
    }
}
