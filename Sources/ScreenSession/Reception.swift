import ScreenWire

/// What the relay sends a subscriber of a stream that codes temporal layers (`subscriptionChanged`): every layer,
/// fewer when the subscriber's link cannot carry them all, or nothing until the next keyframe.
public struct Reception: Sendable, Hashable {
    public var highestLayer: Int
    public var layers: Int
    public var waitingForKeyframe: Bool

    public init(highestLayer: Int, layers: Int, waitingForKeyframe: Bool) {
        self.highestLayer = highestLayer
        self.layers = layers
        self.waitingForKeyframe = waitingForKeyframe
    }

    public var isThinned: Bool { waitingForKeyframe || highestLayer < layers - 1 }

    /// The frame rate this leaves of a stream's (each layer down halves it, as the layers are dyadic).
    public func framesPerSecond(of streamFramesPerSecond: Double) -> Double {
        streamFramesPerSecond / Double(1 << max(0, layers - 1 - highestLayer))
    }

    /// What a viewer is told: "your connection is slow: showing 1.2 fps", or that it waits for a fresh picture.
    public func message(streamFramesPerSecond: Double) -> String {
        if waitingForKeyframe { return "your connection is slow: waiting for a fresh picture" }
        guard isThinned else { return "your connection keeps up: showing every frame" }
        let rate = framesPerSecond(of: streamFramesPerSecond)
        return "your connection is slow: showing \(rate.formatted(.number.precision(.fractionLength(0...1)))) fps"
    }
}
