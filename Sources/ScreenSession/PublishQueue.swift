/// A video frame as ``PublishQueue`` weighs it.
protocol QueuedVideoFrame: Sendable {
    var isKeyframe: Bool { get }
    /// Its capture time, in seconds.
    var captureSeconds: Double { get }
    var byteCount: Int { get }
}

/// What a publisher's frames wait in between the capture thread and the network, and what is dropped when the
/// network falls behind: the policy alone, pure, tested without a connection (``RelayPublisher`` holds one
/// under its lock).
///
/// Video is bounded in time: the frames queued span at most ``maximumVideoSeconds`` of capture time. What is
/// queued is never thrown away whole. A delta that would take the queue past its bound is dropped, and so are the
/// deltas after it (they would not decode after a gap) until a keyframe, which is asked for once; the frames
/// queued before it still go out. A keyframe is always queued, and the frames queued before it go then: it
/// supersedes them. (With an uplink controller holding frames back before encoding, the bound is seldom met.)
/// A new connection starts a new stream, which must begin with a keyframe: queued frames that do not are
/// dropped the same way. Sound: at most ``audioLimit`` frames, the oldest dropped first (sound has no keyframes
/// to wait for), sent ahead of video.
struct PublishQueue<Video: QueuedVideoFrame, Audio: Sendable>: Sendable {
    let maximumVideoSeconds: Double
    let audioLimit: Int
    private var video: [Video] = []
    private var audio: [Audio] = []
    /// After a drop, frames are discarded until a keyframe arrives.
    private(set) var awaitingKeyframe = false
    private(set) var droppedVideoFrames = 0
    private(set) var droppedAudioFrames = 0
    /// Bytes of the video frames queued.
    private(set) var queuedVideoBytes = 0

    init(maximumVideoSeconds: Double, audioLimit: Int) {
        self.maximumVideoSeconds = maximumVideoSeconds
        self.audioLimit = audioLimit
    }

    var queuedVideoFrames: Int { video.count }
    var queuedAudioFrames: Int { audio.count }

    /// Queues a video frame. Returns whether the encoder must be asked for a keyframe.
    mutating func push(video frame: Video) -> Bool {
        if frame.isKeyframe {
            // It supersedes whatever waits before it.
            droppedVideoFrames += video.count
            video.removeAll(keepingCapacity: true)
            queuedVideoBytes = 0
            awaitingKeyframe = false
        } else if awaitingKeyframe {
            droppedVideoFrames += 1
            return false
        } else if let oldest = video.first, frame.captureSeconds - oldest.captureSeconds > maximumVideoSeconds {
            droppedVideoFrames += 1
            awaitingKeyframe = true
            return true
        }
        video.append(frame)
        queuedVideoBytes += frame.byteCount
        return false
    }

    mutating func push(audio frame: Audio) {
        if audio.count >= audioLimit {
            audio.removeFirst()
            droppedAudioFrames += 1
        }
        audio.append(frame)
    }

    /// A new connection, a new stream: it must start with a keyframe. Returns whether one must be asked for.
    mutating func startNewStream() -> Bool {
        guard let first = video.first, !first.isKeyframe else { return false }
        droppedVideoFrames += video.count
        video.removeAll(keepingCapacity: true)
        queuedVideoBytes = 0
        awaitingKeyframe = true
        return true
    }

    /// The next frame to send: sound first (it is small, and a picture's transfer must not delay it).
    mutating func nextAudio() -> Audio? { audio.isEmpty ? nil : audio.removeFirst() }

    mutating func nextVideo() -> Video? {
        guard !video.isEmpty else { return nil }
        let frame = video.removeFirst()
        queuedVideoBytes -= frame.byteCount
        return frame
    }
}
