/// Which temporal layer each coded frame belongs to, which reference slot it predicts from and which slots it
/// refreshes: the dyadic L1T2/L1T3 structure of libwebrtc's screen sharing. With three layers the frames go
/// 0, 2, 1, 2, 0, …: a layer-0 frame predicts from the last layer-0 frame (slot 0), a layer-1 frame from it too and
/// is kept in slot 1, and a layer-2 frame predicts from the newest of those and is kept nowhere. Dropping every
/// frame above a layer so leaves a stream that decodes, at a half or a quarter of the frame rate.
///
/// The flat structure keeps the same layers but every frame above layer 0 predicts from the newest layer-0 frame
/// and is kept nowhere: what VP9 gets, through per-frame reference flags (libvpx's SVC mode, which could point
/// LAST at slot 1, codes blocks its decoder refuses alongside an active map).
///
/// Keyframes refresh every slot; keepalives and refinements are coded in layer 0 (whoever is thinned to layer 0
/// gets them), and the pattern starts over after them and after keyframes.
struct TemporalLayers: Hashable {
    enum Structure: Hashable {
        case dyadic
        case flat
    }

    /// One frame's place in the structure.
    struct Frame: Hashable {
        var layer: Int
        var referenceSlot: Int
        /// Bit i: the frame is kept in slot i.
        var refreshMask: UInt8

        static let keyframe = Frame(layer: 0, referenceSlot: 0, refreshMask: 0xFF)
    }

    /// The slots the structure uses (0: newest layer-0 frame, 1: newest layer-1 frame).
    static let slots = 2

    let count: Int
    let structure: Structure
    private var index = 0

    init(count: Int, structure: Structure = .dyadic) {
        precondition((1...3).contains(count), "one to three temporal layers")
        self.count = count
        self.structure = structure
    }

    /// Each layer's share of the bit rate, cumulative (layers 0…i): the lower layers, which more viewers get and
    /// every higher frame predicts from, are coded better.
    var cumulativeRateShares: [Double] {
        switch count {
        case 1: [1]
        case 2: [0.6, 1]
        default: [0.4, 0.6, 1]
        }
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
        let flat = structure == .flat
        switch (count, index) {
        case (1, _), (_, 0): return Frame(layer: 0, referenceSlot: 0, refreshMask: 1)
        case (2, _): return Frame(layer: 1, referenceSlot: 0, refreshMask: 0)
        case (_, 1): return Frame(layer: 2, referenceSlot: 0, refreshMask: 0)
        case (_, 2): return Frame(layer: 1, referenceSlot: 0, refreshMask: flat ? 0 : 0b10)
        default: return Frame(layer: 2, referenceSlot: flat ? 0 : 1, refreshMask: 0)
        }
    }

    private var patternLength: Int { 1 << (count - 1) }
}
