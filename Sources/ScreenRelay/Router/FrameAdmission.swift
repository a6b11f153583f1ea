import ScreenMedia

/// Whether a stream's frame is admitted: within the stream's frame rates (``RouterLimits/maximumFramesPerSecond``,
/// ``RouterLimits/maximumAudioFramesPerSecond``, twice as many at once), its token's (``TokenShares``), and with a
/// capture time that fits the stream's timeline (``CaptureTimeline``). What is not admitted goes to no subscriber,
/// recording or HLS stream; the publisher is told once for a run of refused frames, so that a flood of them is
/// not answered in kind. Pure: the router passes the time.
struct FrameAdmission {
    /// A refused frame: the limit that refused it, and what to tell the publisher (nil: it was told already).
    struct Refusal: Equatable {
        var limit: RelayLimit
        var explanation: String?
    }

    private let videoRate: Double
    private let audioRate: Double
    private var video: TokenBucket
    private var audio: TokenBucket
    private var timeline = CaptureTimeline()
    /// The last frame was refused.
    private var refusing = false

    init(limits: RouterLimits) {
        videoRate = limits.maximumFramesPerSecond
        audioRate = limits.maximumAudioFramesPerSecond
        video = TokenBucket(rate: videoRate, burst: 2 * videoRate)
        audio = TokenBucket(rate: audioRate, burst: 2 * audioRate)
    }

    /// Nil when the frame is admitted.
    mutating func admit(
        _ time: MediaTime, kind: CaptureTimeline.Kind, publisher: String, now: Double, shares: inout TokenShares
    ) -> Refusal? {
        let rate = kind == .video ? videoRate : audioRate
        let withinRate = kind == .video ? video.take(now: now) : audio.take(now: now)
        let refusal: Refusal
        if !withinRate {
            refusal = Refusal(limit: .frameRate, explanation: "frames came faster than \(Int(rate)) a second (\(Int(2 * rate)) at once): the frame was refused")
        } else if !shares.takeFrame(publisher, kind: kind, now: now) {
            let tokenRate = kind == .video ? shares.limits.videoFramesPerSecond : shares.limits.audioFramesPerSecond
            refusal = Refusal(limit: .frameRate, explanation: "this token's streams sent frames faster than \(Int(tokenRate)) a second together: the frame was refused")
        } else {
            let verdict = timeline.admit(time, kind: kind, now: now)
            guard verdict != .accepted else {
                refusing = false
                return nil
            }
            refusal = Refusal(limit: .captureTime, explanation: verdict.explanation(kind: kind, time: time))
        }
        defer { refusing = true }
        return refusing ? Refusal(limit: refusal.limit, explanation: nil) : refusal
    }
}
