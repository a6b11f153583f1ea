import ScreenMedia

/// What every encoder does to a frame before its library sees it: the YUV picture (reallocated at a new size),
/// the active map, presentation times and keyframe requests.
struct EncoderInput {
    let usesActiveMap: Bool
    /// The temporal layer structure; one layer codes every frame in layer 0, refreshing slot 0.
    private(set) var layers: TemporalLayers
    private(set) var picture: YUVPicture?
    private(set) var activeMap: ActiveMap?
    private var keyframeRequested = true
    private var firstCaptureTime: MediaTime?
    private var lastPresentationTime: Int64 = -1
    /// Milliseconds between the frame last prepared and the one prepared before it; nil for the first.
    private(set) var millisecondsSincePreviousFrame: Int64?
    /// Whether the picture may not be fully converted yet (after a resize every row must be converted).
    private var needsFullConversion = true
    /// Whether something was coded since the last refinement (``prepareRefinement(_:)``).
    private(set) var hasUnrefinedChanges = false
    /// The layer of the last frame that coded a change: a refinement in parts refines it in it.
    private(set) var changedLayer = TemporalLayers.Frame.keyframe
    /// The covers painted over the picture now (``VideoFrame/covers``).
    private var paintedCovers = FrameCovers()
    /// A frame skipped since the last coded one changed all of the picture, or some of it.
    private var skippedWholeFrame = false
    private var skippedChanges = false

    init(usesActiveMap: Bool, temporalLayers: TemporalLayers = TemporalLayers(count: 1)) {
        self.usesActiveMap = usesActiveMap
        layers = temporalLayers
    }

    mutating func requestKeyframe() { keyframeRequested = true }

    /// Whether `frame` needs a new picture (the first frame, or a new size): the encoder reopens its library.
    func needsReopening(for frame: VideoFrame) -> Bool {
        picture.map { $0.width != frame.width || $0.height != frame.height } ?? true
    }

    mutating func reopen(width: Int, height: Int, chroma: ChromaFormat) throws(CodecError) {
        picture = try YUVPicture(width: width, height: height, chroma: chroma)
        activeMap = usesActiveMap ? ActiveMap(width: width, height: height) : nil
        layers = TemporalLayers(count: layers.count)
        needsFullConversion = true
        paintedCovers = FrameCovers()
        keyframeRequested = true
    }

    /// Lends the active map of the last ``prepare(_:)`` (nil when the encoder uses none).
    mutating func activeMapBytes<Result>(_ body: (UnsafeMutablePointer<UInt8>) -> Result) -> Result? {
        activeMap?.withMap(body)
    }

    /// Converts what changed in `frame` and says whether it is to be a keyframe, at which presentation time
    /// (milliseconds since the first frame, strictly increasing as the libraries require) and whether the
    /// whole frame is to be coded (a keyframe or a change covering it: no active map).
    /// A frame with no change, of its own or carried from skipped ones (a keepalive), goes in layer 0.
    mutating func prepare(_ frame: VideoFrame) -> (keyframe: Bool, presentationTime: Int64, wholeFrame: Bool, layer: TemporalLayers.Frame) {
        let unchanged = frame.changedRects.isEmpty && !skippedChanges && !skippedWholeFrame
        skippedChanges = false
        convertChanges(of: frame)
        let presentationTime = nextPresentationTime(for: frame)
        let keyframe = keyframeRequested
        keyframeRequested = false
        let wholeFrame = keyframe || skippedWholeFrame || changesWholeFrame(frame)
        skippedWholeFrame = false
        let layer = layers.next(keyframe: keyframe, baseLayer: unchanged)
        if keyframe || !unchanged {
            hasUnrefinedChanges = true
            changedLayer = layer
        }
        if activeMap != nil {
            // Mutated through optional chaining, in place: a local copy would make its arrays copy on write.
            if wholeFrame {
                activeMap?.reset(asReference: layer.isReference)
            } else {
                _ = activeMap?.update(changed: frame.changedRects, layer: layer)
            }
        }
        return (keyframe, presentationTime, wholeFrame, layer)
    }

    /// Converts what changed in `frame` and remembers it for the next coded frame, which must carry it (the frame
    /// is skipped before encoding). A requested keyframe stays requested.
    mutating func skip(_ frame: VideoFrame) {
        guard picture != nil, !needsReopening(for: frame) else { return }
        convertChanges(of: frame)
        if changesWholeFrame(frame) { skippedWholeFrame = true } else { activeMap?.carry(changed: frame.changedRects) }
        if !frame.changedRects.isEmpty { skippedChanges = true }
    }

    private func changesWholeFrame(_ frame: VideoFrame) -> Bool {
        frame.changedRects.contains { $0.intersection(frame.bounds) == frame.bounds }
    }

    /// Brings the picture up to date with `frame`: its changed rectangles, and its covers where they moved.
    private mutating func convertChanges(of frame: VideoFrame) {
        if frame.covers != paintedCovers {
            // Where a cover was, the real picture comes back; where one now is, it goes: both are changes, to be
            // converted (and covered again) and coded. Only when the covers change: no copy on other frames.
            frame.changedRects.append(contentsOf: paintedCovers.rects)
            frame.changedRects.append(contentsOf: frame.covers.rects)
            paintedCovers = frame.covers
        }
        picture?.convert(from: frame, everything: needsFullConversion)
        if !frame.covers.isEmpty {
            picture?.paint(frame.covers, from: frame, within: needsFullConversion ? nil : frame.changedRects)
        }
        needsFullConversion = false
    }

    /// Times a refinement of the unchanged picture (nothing to convert) and makes the active map the blocks
    /// coded since the last one; nil when there is nothing to refine.
    /// A refinement goes in layer 0.
    mutating func prepareRefinement(_ frame: VideoFrame) -> (presentationTime: Int64, layer: TemporalLayers.Frame)? {
        guard hasUnrefinedChanges, picture != nil else { return nil }
        hasUnrefinedChanges = false
        let layer = layers.next(keyframe: false, baseLayer: true)
        activeMap?.beginRefinement(layer: layer)
        return (nextPresentationTime(for: frame), layer)
    }

    /// Times one part of a refinement in parts (``RefinementSteps``) and makes the active map every block coded
    /// since the parts began, or since the last refinement. A part goes in the layer of the change it refines,
    /// predicting from it (``TemporalLayers/part(of:)``).
    mutating func prepareRefinementStep(_ frame: VideoFrame) -> (presentationTime: Int64, layer: TemporalLayers.Frame) {
        hasUnrefinedChanges = false
        let layer = layers.part(of: changedLayer)
        activeMap?.beginRefinementStep(layer: layer)
        return (nextPresentationTime(for: frame), layer)
    }

    /// The refinement in parts is over: what it coded counts as refined.
    mutating func finishRefinementSteps() { activeMap?.finishRefinement() }

    /// `frame`'s presentation time: milliseconds since the first frame, strictly increasing.
    private mutating func nextPresentationTime(for frame: VideoFrame) -> Int64 {
        let first = firstCaptureTime ?? frame.captureTime
        firstCaptureTime = first
        var presentationTime = (frame.captureTime - first).converted(to: 1000).value
        if presentationTime <= lastPresentationTime { presentationTime = lastPresentationTime + 1 }
        millisecondsSincePreviousFrame = lastPresentationTime < 0 ? nil : presentationTime - lastPresentationTime
        lastPresentationTime = presentationTime
        return presentationTime
    }
}
