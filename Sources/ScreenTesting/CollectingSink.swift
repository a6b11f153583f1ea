public import ScreenMedia
import Synchronization

/// A copy of one encoded frame, kept by ``CollectingSink``.
public struct CollectedFrame: Sendable {
    public var codec: VideoCodec
    public var payload: [UInt8]
    public var isKeyframe: Bool
    public var width: Int
    public var height: Int
    public var captureTime: MediaTime
    public var wallClock: WallClockTime
    public var metadata: FrameMetadata
    public var temporalLayer = 0
}

/// A sink that keeps a copy of every encoded frame, readable from another thread while capture runs.
/// A test double for a network transport: it stores instead of sending.
public final class CollectingSink: EncodedFrameSink, Sendable {
    private let storage = Mutex<(frames: [CollectedFrame], finished: Bool)>(([], false))

    public init() {}

    public func write(_ frame: EncodedFrame) throws {
        let copy = CollectedFrame(
            codec: frame.codec, payload: frame.payloadBytes, isKeyframe: frame.isKeyframe, width: frame.width,
            height: frame.height, captureTime: frame.captureTime, wallClock: frame.wallClock, metadata: frame.metadata,
            temporalLayer: frame.temporalLayer)
        storage.withLock { $0.frames.append(copy) }
    }

    public func finish() throws { storage.withLock { $0.finished = true } }

    public var frames: [CollectedFrame] { storage.withLock { $0.frames } }
    public var isFinished: Bool { storage.withLock { $0.finished } }
}
