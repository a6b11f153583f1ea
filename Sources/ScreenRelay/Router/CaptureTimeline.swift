public import ScreenMedia

/// A stream's capture times as the relay accepts them: each frame's may not be earlier than the previous frame's
/// of its kind (the same time again is a keepalive's or a re-sent picture's), and may not run ahead of the relay's own clock by more than ``maximumLeadSeconds`` since the
/// stream's first frame. A frame outside them is refused (not forwarded, recorded or packaged); the stream goes
/// on with the next frame that is inside them.
///
/// Refusing, rather than rebasing the timeline as ffmpeg does with a discontinuity, keeps what every subscriber,
/// recording and HLS stream sees one timeline without a jump: screenpub's times come from one monotonic clock,
/// so only a broken or hostile publisher sends times that go back or leap ahead. The bound on the lead keeps a
/// recording's and a playlist's times within what the relay has lived through (MediaMTX closes a recording that
/// drifts 5 s from the wall clock; a publisher's uplink queue may hold its first frame a while, hence a minute).
/// Capture times are within 2^60 ns of zero (the wire parser's bound), so every difference here is exact.
public struct CaptureTimeline: Sendable {
    public static let maximumLeadSeconds = 60.0

    public enum Kind: Sendable { case video, audio }

    public enum Verdict: Sendable, Equatable {
        case accepted
        /// Earlier than the previous frame of its kind (`previous`).
        case earlier(previous: MediaTime)
        /// Ahead of the relay's clock since the stream's first frame by this many seconds.
        case runsAhead(seconds: Double)

        /// What the publisher is told (one sentence, with the numbers).
        public func explanation(kind: Kind, time: MediaTime) -> String {
            switch self {
            case .accepted: ""
            case .earlier(let previous):
                "a \(kind == .video ? "video" : "audio") frame's capture time (\(time)) is earlier than the previous one's (\(previous)): the frame was refused"
            case .runsAhead(let seconds):
                "a frame's capture time runs \(Int(saturating: seconds)) s ahead of the relay's clock since the stream's first frame (at most \(Int(CaptureTimeline.maximumLeadSeconds)) s): the frame was refused"
            }
        }
    }

    /// The stream's first accepted frame: its capture time and when it arrived (seconds on the relay's clock).
    private var anchor: (capture: MediaTime, arrival: Double)?
    private var lastVideo: MediaTime?
    private var lastAudio: MediaTime?

    public init() {}

    /// Judges a frame's capture time, arrived at `now`; an accepted time becomes the previous one of its kind.
    public mutating func admit(_ time: MediaTime, kind: Kind, now: Double) -> Verdict {
        let last = kind == .video ? lastVideo : lastAudio
        if let last, time < last { return .earlier(previous: last) }
        if let anchor {
            let lead = (time - anchor.capture).seconds - (now - anchor.arrival)
            guard lead <= Self.maximumLeadSeconds else { return .runsAhead(seconds: lead) }
        } else {
            anchor = (time, now)
        }
        if kind == .video { lastVideo = time } else { lastAudio = time }
        return .accepted
    }
}
