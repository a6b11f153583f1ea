import Testing

@testable import ScreenCodec

/// Temporal layers go by time: at the configured frame rate the pattern is 0, 2, 1, 2; a screen that changes less
/// often keeps its layer 0 as frequent in time, not in count.
@Suite struct TemporalLayersTests {
    /// The layers of frames at `times` (milliseconds), the first a keyframe.
    static func layers(_ count: Int, framesPerSecond: Double = 5, at times: [Int64]) -> [Int] {
        var layers = TemporalLayers(count: count, framesPerSecond: framesPerSecond)
        return times.enumerated().map { index, time in layers.next(keyframe: index == 0, baseLayer: false, presentationTime: time).layer }
    }

    @Test func atTheConfiguredRateTheLayersGoZeroTwoOneTwo() {
        let times = (0..<9).map { Int64($0 * 200) }
        #expect(Self.layers(3, at: times) == [0, 2, 1, 2, 0, 2, 1, 2, 0])
        #expect(Self.layers(2, at: times) == [0, 1, 0, 1, 0, 1, 0, 1, 0])
        #expect(Self.layers(1, at: times) == Array(repeating: 0, count: 9))
        // Capture jitter of a few tens of milliseconds leaves the pattern as it is.
        #expect(Self.layers(3, at: [0, 215, 390, 610, 785, 1010, 1195, 1420, 1590]) == [0, 2, 1, 2, 0, 2, 1, 2, 0])
    }

    /// Pages turned twice a second at 5 fps: a layer-0 frame a second (by count it would be one every 2 s), and
    /// a frame every 0.2 s after a pause starts with layer 0.
    @Test func aScreenThatChangesLessOftenKeepsLayerZeroFrequentInTime() {
        #expect(Self.layers(3, at: (0..<8).map { Int64($0 * 500) }) == [0, 1, 0, 1, 0, 1, 0, 1])
        #expect(Self.layers(3, at: [0, 200, 400, 3000, 3200, 3400, 3600, 3800]) == [0, 2, 1, 0, 2, 1, 2, 0])
        // Once a second or less often: every frame is a layer-0 frame.
        #expect(Self.layers(3, at: (0..<5).map { Int64($0 * 1000) }) == [0, 0, 0, 0, 0])
    }

    /// Keyframes, keepalives and refinements are layer-0 frames and start the spacing over; only layer-0 frames
    /// are kept as the reference.
    @Test func layerZeroFramesStartTheSpacingOver() {
        var layers = TemporalLayers(count: 3, framesPerSecond: 5)
        #expect(layers.next(keyframe: true, baseLayer: false, presentationTime: 0) == .keyframe)
        #expect(layers.next(keyframe: false, baseLayer: false, presentationTime: 200) == .init(layer: 2, refreshMask: 0))
        #expect(layers.next(keyframe: false, baseLayer: true, presentationTime: 400) == .init(layer: 0, refreshMask: 1))
        #expect(layers.next(keyframe: false, baseLayer: false, presentationTime: 600) == .init(layer: 2, refreshMask: 0))
        #expect(layers.next(keyframe: false, baseLayer: false, presentationTime: 800) == .init(layer: 1, refreshMask: 0))
        #expect(layers.next(keyframe: false, baseLayer: false, presentationTime: 1200) == .init(layer: 0, refreshMask: 1))
    }
}
