import Testing

@testable import ScreenCodec

/// Which temporal layer each coded frame is in and which frames replace the reference, frame by frame.
@Suite struct TemporalLayersTests {
    /// The layers of `count` frames after a keyframe (the keyframe not included), none of them forced to layer 0.
    static func pattern(layers: Int, frames count: Int) -> [Int] {
        var layers = TemporalLayers(count: layers)
        _ = layers.next(keyframe: true, baseLayer: false)
        return (0..<count).map { _ in layers.next(keyframe: false, baseLayer: false).layer }
    }

    @Test func aKeyframeIsLayerZeroAndRefreshesEverySlot() {
        for count in 1...3 {
            var layers = TemporalLayers(count: count)
            let keyframe = layers.next(keyframe: true, baseLayer: true)
            #expect(keyframe == .keyframe && keyframe.layer == 0 && keyframe.refreshMask == 0xFF && keyframe.isReference)
        }
    }

    @Test func thePatternsAreOneTwoAndThreeLayersDeep() {
        #expect(Self.pattern(layers: 1, frames: 6) == [0, 0, 0, 0, 0, 0])
        #expect(Self.pattern(layers: 2, frames: 6) == [1, 0, 1, 0, 1, 0])
        #expect(Self.pattern(layers: 3, frames: 8) == [2, 1, 2, 0, 2, 1, 2, 0])
    }

    @Test func onlyLayerZeroFramesReplaceTheReference() {
        var layers = TemporalLayers(count: 3)
        _ = layers.next(keyframe: true, baseLayer: false)
        for _ in 0..<40 {
            let frame = layers.next(keyframe: false, baseLayer: false)
            #expect(frame.isReference == (frame.layer == 0))
            #expect(frame.refreshMask == 1 << frame.layer, "a frame above layer 0 is kept only in its layer's slot, which no lower layer reads")
            #expect(frame.readsSlot == 0)
            let part = layers.part(of: frame)
            #expect(part.layer == frame.layer && part.readsSlot == (frame.layer == 0 ? 0 : frame.layer) && part.refreshMask == frame.refreshMask, "a part refines the frame in its own layer")
        }
    }

    @Test func eachLayerIsAShareOfTheFramesByCount() {
        let layers = Self.pattern(layers: 3, frames: 400)
        #expect(layers.count(where: { $0 == 0 }) == 100, "a quarter in layer 0")
        #expect(layers.count(where: { $0 <= 1 }) == 200, "half in layers 0 and 1")
    }

    @Test func aFrameForcedToLayerZeroStartsThePatternOver() {
        var layers = TemporalLayers(count: 3)
        _ = layers.next(keyframe: true, baseLayer: false)
        _ = layers.next(keyframe: false, baseLayer: false)  // layer 2
        let keepalive = layers.next(keyframe: false, baseLayer: true)
        #expect(keepalive.layer == 0 && keepalive.isReference)
        #expect((0..<4).map { _ in layers.next(keyframe: false, baseLayer: false).layer } == [2, 1, 2, 0])
        // A keyframe mid-pattern starts it over too.
        _ = layers.next(keyframe: true, baseLayer: false)
        #expect((0..<4).map { _ in layers.next(keyframe: false, baseLayer: false).layer } == [2, 1, 2, 0])
    }

    @Test func oneToThreeLayersOnly() async {
        await #expect(processExitsWith: .failure) { _ = TemporalLayers(count: 0) }
        await #expect(processExitsWith: .failure) { _ = TemporalLayers(count: 4) }
    }
}
