import Testing

@testable import ScreenRelay

/// The cached group of pictures from made-up frames (their "frame" a number).
@Suite struct PictureCacheTests {
    @Test func aKeyframeStartsTheGroupAndDeltasJoinIt() {
        var cache = PictureCache<Int>(maximumBytes: 1000)
        cache.add(1, layer: 0, bytes: 10, arrival: 1, isKeyframe: false)
        #expect(cache.entries.isEmpty, "nothing before a keyframe")
        cache.add(2, layer: 0, bytes: 100, arrival: 2, isKeyframe: true)
        cache.add(3, layer: 1, bytes: 10, arrival: 3, isKeyframe: false)
        #expect(cache.entries.map(\.frame) == [2, 3] && cache.bytes == 110 && cache.keyframe?.frame == 2)
        cache.add(4, layer: 0, bytes: 50, arrival: 4, isKeyframe: true)
        #expect(cache.entries.map(\.frame) == [4] && cache.bytes == 50)
    }

    @Test func pastItsBytesItIsDroppedUntilTheNextKeyframe() {
        var cache = PictureCache<Int>(maximumBytes: 100)
        cache.add(1, layer: 0, bytes: 60, arrival: 1, isKeyframe: true)
        cache.add(2, layer: 0, bytes: 50, arrival: 2, isKeyframe: false)
        #expect(cache.entries.isEmpty && cache.bytes == 0)
        cache.add(3, layer: 0, bytes: 10, arrival: 3, isKeyframe: false)
        #expect(cache.entries.isEmpty, "no group without its keyframe")
        cache.add(4, layer: 0, bytes: 200, arrival: 4, isKeyframe: true)
        #expect(cache.entries.isEmpty, "a keyframe larger than the bound is not kept either")
        cache.add(5, layer: 0, bytes: 90, arrival: 5, isKeyframe: true)
        #expect(cache.entries.map(\.frame) == [5])
    }

    @Test func pastItsFramesItIsDropped() {
        var cache = PictureCache<Int>(maximumBytes: 1 << 30)
        cache.add(0, layer: 0, bytes: 1, arrival: 0, isKeyframe: true)
        for index in 1..<PictureCache<Int>.maximumFrames { cache.add(index, layer: 0, bytes: 1, arrival: UInt64(index), isKeyframe: false) }
        #expect(cache.entries.count == PictureCache<Int>.maximumFrames)
        cache.add(-1, layer: 0, bytes: 1, arrival: 9999, isKeyframe: false)
        #expect(cache.entries.isEmpty)
    }

    @Test func aLongGroupStartsAJoinerWithItsLayerZeroFrames() {
        var cache = PictureCache<Int>(maximumBytes: 1 << 20)
        #expect(cache.joining(maximumBytes: 1000) == nil)
        cache.add(0, layer: 0, bytes: 100, arrival: 1, isKeyframe: true)
        cache.add(1, layer: 1, bytes: 100, arrival: 2, isKeyframe: false)
        cache.add(2, layer: 0, bytes: 100, arrival: 3, isKeyframe: false)
        #expect(cache.joining(maximumBytes: 1000)?.entries.map(\.frame) == [0, 1, 2] && cache.joining(maximumBytes: 1000)?.layerZeroOnly == false)
        cache.add(3, layer: 1, bytes: 150, arrival: 4, isKeyframe: false)
        // 450 bytes: more than 4 keyframes' worth: layer 0 only (200 bytes).
        #expect(cache.joining(maximumBytes: 1000)?.entries.map(\.frame) == [0, 2] && cache.joining(maximumBytes: 1000)?.layerZeroOnly == true)
        #expect(cache.joining(maximumBytes: 199) == nil, "a group that does not fit the joiner's queue starts nobody")
    }
}
