/// Receives what a ``FrameSource`` produces, on the source's capture thread.
public protocol FrameConsumer: AnyObject {
    /// A frame whose pixels changed (see ``VideoFrame/changedRects``), or the first frame, or a frame at a
    /// new size (`sizeChanged`: the consumer must start a new keyframe). The frame is lent for this call only.
    func consume(_ frame: VideoFrame, sizeChanged: Bool) throws
    /// A tick on which nothing changed: nothing was grabbed or converted. `frame` still holds the last picture.
    func consumeUnchanged(_ frame: VideoFrame, at time: MediaTime) throws
    /// `count` ticks were skipped because the previous tick overran its interval (the machine is too slow
    /// for the frame rate).
    func missedTicks(_ count: Int)
}

/// Something that produces screen frames: the seed's custom `OTVideoCapture`.
///
/// A source runs its capture loop on the calling thread (its display or stream handle belongs to that
/// thread) until `stop` is signalled, and hands frames to the consumer synchronously, so pixels are
/// never copied between capture and conversion.
public protocol FrameSource: AnyObject {
    /// Current capture size in pixels.
    var size: (width: Int, height: Int) { get }
    /// Captures at `framesPerSecond` until `stop` is signalled (returns normally) or capture fails (throws).
    func run(framesPerSecond: Double, stop: StopSignal, consumer: any FrameConsumer) throws
}
