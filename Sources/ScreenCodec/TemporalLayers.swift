/// Which temporal layer each coded frame belongs to and whether it is kept as the reference: L1T2/L1T3 as in
/// libwebrtc's screen sharing, frames 0, 2, 1, 2, 0, … With three layers. Every frame predicts from the newest
/// layer-0 frame (the reference, slot 0), and only layer-0 frames replace it: dropping every frame above a layer
/// leaves a stream that decodes, at a half or a quarter of the frame rate.
///
/// Layers go by count, not by time: layer 0 is a quarter of the coded frames, so about a quarter of the stream's
/// rate, whatever the screen's pace — what a link at a quarter of that rate carries. Layers by time (layer 0
/// every 4 configured intervals) were measured and left: pages turned twice a second at 5 fps went 0, 1, 0, 1, …,
/// layer 0 became half the stream, and a 250 kbit/s viewer of a 450 kbit/s stream took 30 s to drain its queue
/// (newest picture p95 4.8 s against 3.1 s).
///
/// A dyadic variant, where the second layer-2 frame predicts from the layer-1 frame before it, was measured and
/// left: with libaom's SVC reference configuration those frames grew without end on typing (2 → 140 KB in 40
/// frames at 640×360, pictures right but coded against an ever older picture), and libvpx's SVC mode, which
/// could point LAST at another slot, codes blocks its decoder refuses beside an active map.
///
/// Keyframes refresh every slot; keepalives and refinements are coded in layer 0 (whoever is thinned to layer 0
/// gets them), and the pattern starts over after them and after keyframes. A frame above layer 0 is also kept in
/// its layer's own slot (1 or 2), which only the parts of a refinement in parts read (``part(of:)``): a part
/// refines the frame before it in that frame's layer, so that a viewer thinned below it drops both.
struct TemporalLayers: Hashable {
    /// One frame's place in the structure.
    struct Frame: Hashable {
        var layer: Int
        /// Bit i: the frame is kept in slot i (layer 0: slot 0, the reference; a keyframe: every slot).
        var refreshMask: UInt8
        /// The slot it predicts from: 0 (the reference), but for a part of a refinement in parts of a frame above
        /// layer 0, which predicts from that frame, kept in its layer's slot.
        var readsSlot = 0

        var isReference: Bool { refreshMask & 1 != 0 }
        static let keyframe = Frame(layer: 0, refreshMask: 0xFF)
    }

    let count: Int
    private var index = 0

    init(count: Int) {
        precondition((1...3).contains(count), "one to three temporal layers")
        self.count = count
    }

    /// The next coded frame: a keyframe, one that must be in layer 0 (a keepalive, a refinement), or the next in
    /// the pattern.
    mutating func next(keyframe: Bool, baseLayer: Bool) -> Frame {
        if keyframe {
            index = 1 % patternLength
            return .keyframe
        }
        if baseLayer { index = 0 }
        defer { index = (index + 1) % patternLength }
        switch (count, index) {
        case (1, _), (_, 0): return Frame(layer: 0, refreshMask: 1)
        case (2, _), (_, 2): return Frame(layer: 1, refreshMask: 1 << 1)
        default: return Frame(layer: 2, refreshMask: 1 << 2)
        }
    }

    /// A part of a refinement in parts of `changed` (the last frame that coded a change): in its layer, predicting
    /// from it and kept where it was. The pattern goes on after it where it was.
    func part(of changed: Frame) -> Frame {
        changed.layer == 0 ? Frame(layer: 0, refreshMask: 1) : Frame(layer: changed.layer, refreshMask: 1 << changed.layer, readsSlot: changed.layer)
    }

    private var patternLength: Int { 1 << (count - 1) }
}
