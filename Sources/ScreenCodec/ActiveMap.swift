import ScreenMedia

/// Which 16×16 blocks the encoder should code: those that changed in this frame (or in frames skipped since the
/// last coded one) or the previous one. libvpx
/// (VP8, VP9) and libaom (AV1) take the same map, one byte per 16×16 block.
///
/// Inactive blocks are coded as "skip, copy from the last frame" without motion search or mode decisions
/// (Chrome Remote Desktop drives libvpx the same way), so a small change costs in proportion to its area.
/// Blocks that changed in the previous frame stay active once more, which lets the encoder refine text it
/// first coded coarsely instead of freezing it at that quality.
struct ActiveMap {
    let columns: Int
    let rows: Int
    private var thisFrame: [UInt8]
    private var lastFrame: [UInt8]
    /// What the encoder is given: blocks changed in this frame or the last one.
    private var sent: [UInt8]
    /// Blocks changed since the last refinement (``beginRefinement()``): coded at the rate control's quality
    /// of the moment, which a still screen can afford to improve.
    private var unrefined: [UInt8]
    /// With temporal layers (``TemporalLayers``), the blocks coded since the reference (the newest layer-0 frame)
    /// was: every frame predicts from it, so it must code them too, or they would be copied stale from it.
    /// Without layers every frame is the reference and this stays empty.
    private var staleInReference: [UInt8]

    init(width: Int, height: Int) {
        columns = (width + 15) / 16
        rows = (height + 15) / 16
        thisFrame = [UInt8](repeating: 0, count: columns * rows)
        lastFrame = thisFrame
        sent = thisFrame
        unrefined = [UInt8](repeating: 1, count: columns * rows)
        staleInReference = thisFrame
    }

    /// Marks the blocks touched by `rects`, combines them with the last frame's (and those of frames skipped
    /// since, ``carry(changed:)``, and those the reference predates) and returns the active share.
    mutating func update(changed rects: [PixelRect], layer: TemporalLayers.Frame = .init(layer: 0, refreshMask: 1)) -> Double {
        carry(changed: rects)
        var active = 0
        for index in sent.indices {
            sent[index] = thisFrame[index] | lastFrame[index] | staleInReference[index]
            unrefined[index] |= thisFrame[index]
            active += Int(sent[index])
        }
        noteCoded(sent, asReference: layer.isReference)
        swap(&thisFrame, &lastFrame)
        for index in thisFrame.indices { thisFrame[index] = 0 }
        return Double(active) / Double(sent.count)
    }

    /// Marks the blocks touched by `rects` as changed without coding them yet: a frame skipped before encoding,
    /// whose changes the next coded frame must carry.
    mutating func carry(changed rects: [PixelRect]) {
        for rect in rects where !rect.isEmpty {
            let firstColumn = max(0, rect.x / 16), lastColumn = min(columns - 1, (rect.maxX - 1) / 16)
            let firstRow = max(0, rect.y / 16), lastRow = min(rows - 1, (rect.maxY - 1) / 16)
            guard firstColumn <= lastColumn, firstRow <= lastRow else { continue }
            for row in firstRow...lastRow {
                for column in firstColumn...lastColumn { thisFrame[row * columns + column] = 1 }
            }
        }
    }

    /// After a frame that coded `coded`: a new reference holds the picture as it is; otherwise the reference is
    /// stale where the frame coded anything.
    private mutating func noteCoded(_ coded: [UInt8], asReference: Bool) {
        for index in coded.indices { staleInReference[index] = asReference ? 0 : staleInReference[index] | coded[index] }
    }

    /// Forgets earlier changes (after a keyframe or a whole-frame change, which codes every block anyway, and
    /// every block then awaits refinement). A frame that does not become the reference leaves it stale everywhere.
    mutating func reset(asReference: Bool = true) {
        for index in lastFrame.indices { lastFrame[index] = 0 }
        for index in thisFrame.indices { thisFrame[index] = 0 }
        for index in staleInReference.indices { staleInReference[index] = asReference ? 0 : 1 }
        for index in unrefined.indices { unrefined[index] = 1 }
    }

    /// Makes the unrefined blocks the map (what a refinement codes again) and counts them as refined.
    /// Changes carried from skipped frames are coded with it, and what the reference predates.
    mutating func beginRefinement(layer: TemporalLayers.Frame = .init(layer: 0, refreshMask: 1)) {
        for index in sent.indices {
            sent[index] = unrefined[index] | thisFrame[index] | staleInReference[index]
            unrefined[index] = 0
            lastFrame[index] = 0
            thisFrame[index] = 0
        }
        noteCoded(sent, asReference: layer.isReference)
    }

    /// Makes the unrefined blocks the map, and keeps them unrefined: one part of a refinement in parts
    /// (``RefinementSteps``), each of which codes them all again, finer, until ``finishRefinement()``. Changes
    /// carried from skipped frames are coded with it, and what the reference predates.
    mutating func beginRefinementStep(layer: TemporalLayers.Frame = .init(layer: 0, refreshMask: 1)) {
        for index in sent.indices {
            sent[index] = unrefined[index] | thisFrame[index] | staleInReference[index]
            unrefined[index] = sent[index]
            lastFrame[index] = 0
            thisFrame[index] = 0
        }
        noteCoded(sent, asReference: layer.isReference)
    }

    /// The refinement in parts is over: its blocks count as refined.
    mutating func finishRefinement() {
        for index in unrefined.indices { unrefined[index] = 0 }
    }

    /// Lends the map computed by the last ``update(changed:)`` (rows × columns bytes, 1 = code this block).
    mutating func withMap<Result>(_ body: (UnsafeMutablePointer<UInt8>) -> Result) -> Result {
        // The map has a byte for every block of a picture of at least one block, so it is never empty.
        sent.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
