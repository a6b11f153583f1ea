import ScreenCodec
import ScreenMedia
import ScreenTesting
import Testing

/// Privacy covers as the encoders paint them: nothing of what is under a cover is coded, in any frame or style,
/// and an area a cover leaves shows the real picture again although the capture reported no change there.
@Suite struct CoverTests {
    static let secret: (r: UInt8, g: UInt8, b: UInt8) = (230, 40, 200)
    static let background: (r: UInt8, g: UInt8, b: UInt8) = (20, 160, 60)

    /// The decoded pictures of `frames` fed one by one to one encoder and decoder.
    func code(
        _ codec: VideoCodec, chroma: ChromaFormat = .yuv420, _ steps: [(VideoFrame) -> Void], frame: VideoFrame, check: (Int, VideoFrame) -> Void
    ) throws {
        let encoder = makeVideoEncoder(.init(codec: codec, bitrateKbps: 3000, chroma: chroma))
        let decoder = try makeVideoDecoder(for: codec)
        for (index, step) in steps.enumerated() {
            step(frame)
            frame.captureTime = MediaTime(value: Int64(index), timescale: 5)
            let sink = CollectingSink()
            try encoder.encode(frame) { try sink.write($0) }
            for encoded in sink.frames {
                try encoded.payload.withUnsafeBytes { bytes in
                    try decoder.decode(bytes, metadata: encoded.metadata) { check(index, $0) }
                }
            }
        }
    }

    /// The largest difference from `color` anywhere in `rect`, and the smallest.
    static func differences(_ picture: VideoFrame, _ rect: PixelRect, _ color: (r: UInt8, g: UInt8, b: UInt8)) -> (max: Int, min: Int) {
        var (largest, smallest) = (0, Int.max)
        for y in stride(from: rect.y, to: rect.maxY, by: 2) {
            for x in stride(from: rect.x, to: rect.maxX, by: 2) {
                let difference = TestPattern.difference(picture, x: x, y: y, color)
                largest = max(largest, difference)
                smallest = min(smallest, difference)
            }
        }
        return (largest, smallest)
    }

    /// The largest difference between pixels 4 apart in a row inside one pixelation block of `cover`, away from
    /// the badge in its middle.
    static func largestDetail(_ picture: VideoFrame, _ cover: PixelRect) -> Int {
        var largest = 0
        for y in stride(from: cover.y + 2, to: cover.y + 16, by: 3) {
            for x in stride(from: cover.x + 2, to: cover.maxX - 6, by: 2) where (x - cover.x) % 32 < 26 {
                let a = picture.pixel(x: x, y: y), b = picture.pixel(x: x + 4, y: y)
                largest = max(largest, abs(Int(a.r) - Int(b.r)), abs(Int(a.g) - Int(b.g)), abs(Int(a.b) - Int(b.b)))
            }
        }
        return largest
    }

    /// In 4:2:0 (every codec) and 4:4:4 (AV1, VP9), where a cover's colour planes are painted at full resolution.
    @Test(arguments: [(VideoCodec.av1, ChromaFormat.yuv420), (.vp9, .yuv420), (.vp8, .yuv420), (.av1, .yuv444), (.vp9, .yuv444)], CoverStyle.allCases)
    func nothingUnderACoverIsCodedAndWhatItLeavesComesBack(codec: (VideoCodec, ChromaFormat), style: CoverStyle) throws {
        let (codec, chroma) = codec
        let frame = VideoFrame(width: 320, height: 192)
        let secretArea = PixelRect(x: 96, y: 64, width: 96, height: 64)
        let moved = PixelRect(x: 200, y: 100, width: 96, height: 64)
        func paintScene(_ frame: VideoFrame) {
            TestPattern.fill(frame) { x, y in secretArea.contains(x: x, y: y) ? Self.secret : Self.background }
        }
        try code(codec, chroma: chroma, [
            // 0: the first picture, the secret already covered.
            { frame in paintScene(frame); frame.markAllChanged(); frame.covers.style = style; frame.covers.rects = [secretArea] },
            // 1: something changes inside the cover: still nothing of it.
            { frame in
                TestPattern.fill(frame) { x, y in
                    secretArea.contains(x: x, y: y) ? (x % 8 < 4 ? Self.secret : (255, 255, 255)) : Self.background
                }
                frame.changedRects = [secretArea]
            },
            // 2: the cover moves away (no pixel changed): the secret area... is what the screen shows, the
            // new place is covered.
            { frame in paintScene(frame); frame.changedRects = []; frame.covers.rects = [moved] },
        ], frame: frame) { step, picture in
            let covered = step < 2 ? secretArea : moved
            switch style {
            case .solid:
                // No pixel under the cover is near the secret colour.
                let (_, nearest) = Self.differences(picture, covered, Self.secret)
                #expect(nearest > 60, "step \(step): a pixel under the cover is close to the secret colour")
            case .pixelate:
                // Only block averages: the stripes drawn in step 1 (4 pixels wide, 200 levels apart) do not show;
                // what differs is coding noise (up to ~17 levels with 4:4:4, whose colour edges stay sharp).
                #expect(Self.largestDetail(picture, covered) <= 24, "step \(step): detail shows through the pixelation")
            }
            #expect(TestPattern.difference(picture, x: 10, y: 10, Self.background) <= 16, "step \(step)")
            if step == 2 {
                #expect(Self.differences(picture, PixelRect(x: 100, y: 68, width: 88, height: 56), Self.secret).max <= 24,
                    "the area the cover left shows the screen again")
            }
        }
    }
}

extension PixelRect {
    func contains(x: Int, y: Int) -> Bool { x >= self.x && x < maxX && y >= self.y && y < maxY }
}
