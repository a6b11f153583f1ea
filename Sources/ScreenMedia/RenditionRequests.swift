import Synchronization

/// A second rendition of the share, asked for by a relay connection and encoded on the capture thread: which
/// codec is wanted now (nil: none), and requests for its keyframe. The relay asks while some viewer decodes only
/// that codec (protocol 7's `startRendition` / `stopRendition`).
public final class RenditionRequests: Sendable {
    private let wanted = Mutex<VideoCodec?>(nil)
    private let keyframe = Atomic<Bool>(false)

    public init() {}

    /// Starts (a codec) or stops (nil) the rendition.
    public func want(_ codec: VideoCodec?) {
        wanted.withLock { $0 = codec }
        if codec != nil { requestKeyframe() }
    }

    /// The codec wanted now; nil when no rendition is.
    public var wantedCodec: VideoCodec? { wanted.withLock { $0 } }

    /// Asks for the rendition's next frame to be a keyframe, even if the screen is idle.
    public func requestKeyframe() { keyframe.store(true, ordering: .releasing) }

    /// Whether a keyframe was asked for since the last call; clears the request.
    public func takeKeyframe() -> Bool { keyframe.exchange(false, ordering: .acquiring) }
}
