/// Compresses frames. One encoder belongs to one thread.
public protocol VideoEncoder: AnyObject {
    var codec: VideoCodec { get }
    /// Asks for the next encoded frame to be a keyframe (a subscriber joined or lost packets).
    func requestKeyframe()
    /// Encodes `frame`; calls `output` zero or more times with the compressed result.
    func encode(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws
    /// Whether parts of the picture were coded since the last ``refine(_:output:)``: at the quality the bit
    /// rate allowed while the screen changed.
    var hasUnrefinedChanges: Bool { get }
    /// Codes the unchanged last picture (`frame`, nothing changed in it) once more, at high quality where it
    /// was coded since the last refinement: what a screen that went still deserves, for a few frames' bytes.
    func refine(_ frame: VideoFrame, output: (EncodedFrame) throws -> Void) throws
    /// Whether changes are refined in parts, one at each tick the screen stays unchanged from the next on (a
    /// target that follows the link: a part fits a tick of it), rather than once, after the screen stood still
    /// for a while.
    var refinesInParts: Bool { get }
    /// Takes `frame`'s changes into the picture without coding them (the network cannot take a frame now): the
    /// next ``encode(_:output:)`` codes them with its own, and a requested keyframe stays requested.
    func skip(_ frame: VideoFrame)
    /// Aims the rate control at `kbps` from the next frame on, with no keyframe.
    func setTargetBitrate(kbps: Int) throws
    /// Codes at the codec's fastest speed while the machine is overloaded (`true`), or as configured again.
    func setFasterSpeed(_ faster: Bool) throws
}
