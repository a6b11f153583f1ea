import Foundation
import ScreenWire

/// A stream's pace as its frames arrive: each temporal layer's rate, the gap between frames and between layer-0
/// frames, and from them when the next layer-0 frame is due — what a frame fitted in above a subscriber's layers
/// must not delay. Pure: the router tells it each frame with the time.
struct StreamCadence {
    /// Layers' bytes decay with this time constant: their rates follow the last few seconds.
    static var layerRateSeconds: Double { 5 }
    /// A new gap's weight in the smoothed ones.
    static var gapWeight: Double { 0.25 }

    /// The highest temporal layer its frames have carried: how far a subscriber's layer can go up.
    private(set) var topLayer = 0
    /// The smoothed gap between its frames; when its last layer-0 frame came and the smoothed gap between those.
    private(set) var frameInterval: Double?
    private(set) var lastLayerZeroAt: Double?
    private(set) var layerZeroInterval: Double?
    /// Each layer's bytes, decaying.
    private var layerBytes = [Double](repeating: 0, count: MediaFrameHeader.Flags.highestLayer + 1)
    /// When the last frame came.
    private(set) var lastFrameAt: Double?

    /// A frame of `bytes` in `layer` came at `now` (`layer` within the header's bounds).
    mutating func count(_ bytes: Int, layer: Int, now: Double) {
        func smoothed(_ old: Double?, _ gap: Double) -> Double { old.map { (1 - Self.gapWeight) * $0 + Self.gapWeight * gap } ?? gap }
        topLayer = max(topLayer, layer)
        if let last = lastFrameAt { frameInterval = smoothed(frameInterval, now - last) }
        if layer == 0 {
            if let last = lastLayerZeroAt { layerZeroInterval = smoothed(layerZeroInterval, now - last) }
            lastLayerZeroAt = now
        }
        let elapsed = lastFrameAt.map { max(0, now - $0) } ?? 0
        let keep = exp(-elapsed / Self.layerRateSeconds)
        for index in layerBytes.indices { layerBytes[index] *= keep }
        layerBytes[layer] += Double(bytes)
        lastFrameAt = now
    }

    /// Bytes per second of layers 0…`layer`.
    func rate(upTo layer: Int) -> Double {
        layerBytes.prefix(max(0, layer) + 1).reduce(0, +) / Self.layerRateSeconds
    }

    /// When the next layer-0 frame is expected: a layer-0 interval after the last one, or, once that has passed,
    /// with the next frame — a frame interval after the last frame, or from now once the stream has paused for
    /// longer than that (nil before the stream has shown its pace).
    func layerZeroDue(after now: Double) -> Double? {
        guard let last = lastLayerZeroAt, let interval = layerZeroInterval else { return nil }
        if last + interval > now { return last + interval }
        guard let frameInterval, let lastFrame = lastFrameAt else { return nil }
        let next = lastFrame + frameInterval
        return next > now - frameInterval ? max(now, next) : now + frameInterval
    }
}
