/// Which temporal layer each coded frame belongs to and whether it is kept as the reference: L1T2/L1T3 as in
/// libwebrtc's screen sharing, frames 0, 2, 1, 2, 0, … with three layers at the configured frame rate. Every
/// frame predicts from the newest layer-0 frame (the reference, slot 0), and only layer-0 frames replace it:
/// dropping every frame above a layer leaves a stream that decodes, at a half or a quarter of the frame rate.
///
/// A frame's layer goes by time, not by count: layer 0 comes once 4 configured frame intervals (2 with two
/// layers) have passed since the last one, less half an interval of jitter, and layer 1 once 2 have passed
/// since the last frame of layer 0 or 1. At the configured rate that is the pattern above. A screen that changes
/// less often keeps its layer 0 as frequent in time: damage-driven capture codes only the frames with changes,
/// so pages turned twice a second are coded at 2 fps, and by count their layer 0 would come every 2 s; by time
/// they go 0, 1, 0, 1, … at 5 fps, a layer-0 frame a second, and a viewer whose link carries layer 0 only still
/// gets a picture about every 4 frame intervals.
///
/// A dyadic variant, where the second layer-2 frame predicts from the layer-1 frame before it, was measured and
/// left: with libaom's SVC reference configuration those frames grew without end on typing (2 → 140 KB in 40
/// frames at 640×360, pictures right but coded against an ever older picture), and libvpx's SVC mode, which
/// could point LAST at another slot, codes blocks its decoder refuses beside an active map.
///
/// Keyframes refresh every slot; keepalives and refinements are coded in layer 0 (whoever is thinned to layer 0
/// gets them), and the pattern starts over after them and after keyframes.
struct TemporalLayers: Hashable {
    /// One frame's place in the structure.
    struct Frame: Hashable {
        var layer: Int
        /// Bit i: the frame is kept in slot i (layer 0: slot 0, the reference; a keyframe: every slot).
        var refreshMask: UInt8

        var isReference: Bool { refreshMask & 1 != 0 }
        static let keyframe = Frame(layer: 0, refreshMask: 0xFF)
    }

    let count: Int
    /// The configured interval between frames, in milliseconds: what the layers' spacing is counted in.
    let frameMilliseconds: Double
    /// Presentation times (ms) of the last layer-0 frame, and of the last frame of layer 0 or 1.
    private var lastLayerZero: Int64?
    private var lastLayerOne: Int64?

    init(count: Int, framesPerSecond: Double = 5) {
        precondition((1...3).contains(count), "one to three temporal layers")
        self.count = count
        frameMilliseconds = framesPerSecond > 0 && framesPerSecond.isFinite ? 1000 / framesPerSecond : 200
    }

    /// The same structure started over (a reopened encoder).
    var startedOver: TemporalLayers { TemporalLayers(count: count, framesPerSecond: 1000 / frameMilliseconds) }

    /// The frame at `presentationTime` (milliseconds, increasing): a keyframe, one that must be in layer 0 (a
    /// keepalive, a refinement), or the layer its time since the last lower frames gives it.
    mutating func next(keyframe: Bool, baseLayer: Bool, presentationTime: Int64) -> Frame {
        func since(_ last: Int64?) -> Double { last.map { Double(presentationTime &- $0) } ?? .infinity }
        let intervals = Double(1 << (count - 1))
        if keyframe || baseLayer || count == 1 || since(lastLayerZero) >= (intervals - 0.5) * frameMilliseconds {
            lastLayerZero = presentationTime
            lastLayerOne = presentationTime
            return keyframe ? .keyframe : Frame(layer: 0, refreshMask: 1)
        }
        if count == 3, since(lastLayerOne) >= 1.5 * frameMilliseconds {
            lastLayerOne = presentationTime
            return Frame(layer: 1, refreshMask: 0)
        }
        return Frame(layer: count - 1, refreshMask: 0)
    }
}
