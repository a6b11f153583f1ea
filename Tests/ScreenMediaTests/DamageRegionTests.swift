import ScreenMedia
import Testing

struct DamageRegionTests {
    let bounds = PixelRect(x: 0, y: 0, width: 100, height: 50)

    @Test func rectanglesAreClippedAndWhatLiesOutsideIsIgnored() {
        var region = DamageRegion(limit: 4)
        region.add(PixelRect(x: 90, y: 40, width: 20, height: 20), within: bounds)
        region.add(PixelRect(x: 200, y: 0, width: 5, height: 5), within: bounds)
        #expect(region.rects == [PixelRect(x: 90, y: 40, width: 10, height: 10)] && !region.overflowed)
    }

    @Test func pastTheLimitTheyBecomeTheirBoundingBox() {
        var region = DamageRegion(limit: 2)
        region.add(PixelRect(x: 0, y: 0, width: 2, height: 2), within: bounds)
        region.add(PixelRect(x: 10, y: 10, width: 2, height: 2), within: bounds)
        region.add(PixelRect(x: 20, y: 5, width: 2, height: 2), within: bounds)
        #expect(region.rects == [PixelRect(x: 0, y: 0, width: 22, height: 12)] && region.overflowed)
        region.removeAll()
        #expect(region.rects.isEmpty && !region.overflowed)
    }

    @Test func aFrameMostlyChangedIsMarkedAllChanged() {
        let frame = VideoFrame(width: 100, height: 50)
        frame.changedRects = [PixelRect(x: 0, y: 0, width: 10, height: 10)]
        DamageRegion.coalesce(frame)
        #expect(frame.changedRects == [PixelRect(x: 0, y: 0, width: 10, height: 10)])
        frame.changedRects = [PixelRect(x: 0, y: 0, width: 100, height: 30), PixelRect(x: 0, y: 25, width: 100, height: 25)]
        DamageRegion.coalesce(frame)
        #expect(frame.changedRects == [frame.bounds])
        frame.changedRects = (0..<5).map { PixelRect(x: $0 * 2, y: 0, width: 1, height: 1) }
        DamageRegion.coalesce(frame, limit: 4)
        #expect(frame.changedRects == [frame.bounds])
    }
}
