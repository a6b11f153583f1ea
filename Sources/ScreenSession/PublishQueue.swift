/// What a publisher's frames wait in between the capture thread and the network, and what is dropped when the
/// network falls behind: the policy alone, pure, tested without a connection (``RelayPublisher`` holds one
/// under its lock).
///
/// Video: at most ``videoLimit`` frames. When full, the queued frames go and a keyframe is needed (deltas after
/// a gap would not decode); until one arrives, frames are dropped. A new connection starts a new stream, which
/// must begin with a keyframe: queued frames that do not are dropped the same way. Sound: at most
/// ``audioLimit`` frames, the oldest dropped first (sound has no keyframes to wait for), sent ahead of video.
struct PublishQueue<Video: Sendable, Audio: Sendable>: Sendable {
    let videoLimit: Int
    let audioLimit: Int
    /// Whether a video frame is a keyframe.
    private let isKeyframe: @Sendable (Video) -> Bool
    private var video: [Video] = []
    private var audio: [Audio] = []
    /// After a drop, frames are discarded until a keyframe arrives.
    private(set) var awaitingKeyframe = false
    private(set) var droppedVideoFrames = 0
    private(set) var droppedAudioFrames = 0

    init(videoLimit: Int, audioLimit: Int, isKeyframe: @escaping @Sendable (Video) -> Bool) {
        self.videoLimit = videoLimit
        self.audioLimit = audioLimit
        self.isKeyframe = isKeyframe
    }

    var queuedVideoFrames: Int { video.count }
    var queuedAudioFrames: Int { audio.count }

    /// Queues a video frame. Returns whether the encoder must be asked for a keyframe.
    mutating func push(video frame: Video) -> Bool {
        var needsKeyframe = false
        if video.count >= videoLimit { needsKeyframe = dropVideoUntilKeyframe() }
        if awaitingKeyframe {
            guard isKeyframe(frame) else {
                droppedVideoFrames += 1
                return needsKeyframe
            }
            awaitingKeyframe = false
        }
        video.append(frame)
        return needsKeyframe
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
        guard let first = video.first, !isKeyframe(first) else { return false }
        return dropVideoUntilKeyframe()
    }

    /// The next frame to send: sound first (it is small, and a picture's transfer must not delay it).
    mutating func nextAudio() -> Audio? { audio.isEmpty ? nil : audio.removeFirst() }
    mutating func nextVideo() -> Video? { video.isEmpty ? nil : video.removeFirst() }

    /// Drops the queued video and waits for a keyframe; returns true (one must be asked for).
    private mutating func dropVideoUntilKeyframe() -> Bool {
        droppedVideoFrames += video.count
        video.removeAll()
        awaitingKeyframe = true
        return true
    }
}
