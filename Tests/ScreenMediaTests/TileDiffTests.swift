import ScreenMedia
import Testing

@Suite struct TileDiffTests {
    private func diff(_ previous: VideoFrame, _ current: VideoFrame) -> [PixelRect] {
        var rects: [PixelRect] = []
        previous.withUnsafeBytes { before in
            current.withUnsafeBytes { after in
                _ = TileDiff.changedRects(
                    previous: before.baseAddress!, previousStride: previous.bytesPerRow, current: after.baseAddress!,
                    currentStride: current.bytesPerRow, width: current.width, height: current.height, into: &rects)
            }
        }
        return rects
    }

    private func copy(_ frame: VideoFrame) -> VideoFrame {
        let copy = VideoFrame(width: frame.width, height: frame.height)
        frame.withUnsafeBytes { source in copy.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
        return copy
    }

    private func set(_ frame: VideoFrame, x: Int, y: Int, _ value: UInt8) {
        frame.withUnsafeMutableBytes { $0[y * frame.bytesPerRow + x * 4 + 1] = value }
    }

    @Test func anUnchangedPictureHasNoChangedTiles() {
        let frame = VideoFrame(width: 100, height: 70)
        #expect(diff(frame, copy(frame)).isEmpty)
    }

    @Test func oneChangedPixelMarksItsTileAndNeighboursMergeInABand() {
        let previous = VideoFrame(width: 100, height: 70)  // tiles: 4 columns (the last 4 px wide), 3 bands
        let current = copy(previous)
        set(current, x: 40, y: 5, 9)  // tile (1, 0)
        set(current, x: 70, y: 31, 9)  // tile (2, 0): joins the one before
        set(current, x: 99, y: 69, 9)  // the last, partial tile
        #expect(diff(previous, current) == [
            PixelRect(x: 32, y: 0, width: 64, height: 32),
            PixelRect(x: 96, y: 64, width: 4, height: 6),
        ])
    }

    @Test func aWholeChangeIsOneRectanglePerBand() {
        let previous = VideoFrame(width: 64, height: 64)
        let current = copy(previous)
        for y in 0..<64 { for x in 0..<64 { set(current, x: x, y: y, 200) } }
        #expect(diff(previous, current) == [PixelRect(x: 0, y: 0, width: 64, height: 32), PixelRect(x: 0, y: 32, width: 64, height: 32)])
    }
}
