/// What the rate control aims at: CBR at a target, within quantizer bounds, with a buffer model in milliseconds
/// of the target rate (how far the library lets the sent bytes run ahead of the target, and how early it reacts).
public struct RateControl: Sendable, Hashable {
    public var targetKbps: Int
    public var minQuantizer = 4
    public var maxQuantizer = 52
    public var bufferInitialMilliseconds = 500
    public var bufferOptimalMilliseconds = 600
    public var bufferMilliseconds = 1000
    /// Whether the target follows the network (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    public var followsLink = false

    public init(targetKbps: Int) { self.targetKbps = max(Self.lowestKbps, targetKbps) }

    /// The coarsest quantizer of libaom and libvpx (0–63).
    public static let coarsestQuantizer = 63

    /// This rate control set up for a target that follows the link (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    func followingTheLink() -> RateControl {
        var following = self
        following.followsLink = true
        following.maxQuantizer = Self.coarsestQuantizer
        following.bufferMilliseconds = Self.linkFollowingBufferMilliseconds
        following.bufferOptimalMilliseconds = Self.linkFollowingBufferMilliseconds
        following.bufferInitialMilliseconds = Self.linkFollowingBufferMilliseconds
        return following
    }

    /// Below this the libraries' rate control no longer holds a screen's keyframes near the target.
    public static let lowestKbps = 50

    /// The rate-control buffer while the target follows the network (``RealtimeEncoder/setTargetBitrate(kbps:)``).
    public static let linkFollowingBufferMilliseconds = 500
    /// The largest frame other than a keyframe while the target follows the network, in milliseconds of the
    /// target: below the buffer, since the libraries overshoot a page change's budget (until the quantizer floor
    /// catches up), and since whatever is on its way when a link narrows is carried at the narrow rate (400 ms
    /// let 75–136 KB frames into a link that fell from 2000 to 500 kbit/s unpaced, and TCP stalled on the losses).
    /// The publisher's socket is paced (ScreenSession's PublisherPacing): a page enters a narrowed link about as
    /// fast as it drains. While the link holds the target below the configured rate, frames are parts instead
    /// (``partMilliseconds``).
    public static let linkFollowingFrameMilliseconds = 400

    /// The largest frame other than a keyframe while the link holds the target below the configured rate: about
    /// a capture tick at 5 fps. A page of text is then sent in parts (``RefinementSteps``): coded coarsely within
    /// this, then finer at the ticks after it, each part within this again. As one frame of up to 400 ms, a page
    /// on a 1 Mbit/s uplink arrived as late as its own transmit time (p95 0.41–0.44 s) and kept the link 57–61 %
    /// busy (a page that found it busy waited for the next tick).
    public static let partMilliseconds = 200

    /// How far the quantizer (of 0–63) is moved for a frame half as large (libaom and libvpx, text: about 6; more,
    /// so that pages fit a link that narrowed under a 400 ms cap within three of them, as they did under 300 with
    /// 6: 8 took four, LinkFollowingTests).
    static let quantizerStepsPerHalving = 10

    /// The highest quantizer a refinement may use: text that was coded at whatever the bit rate allowed while it
    /// changed is coded again at least this finely once it stands still.
    static let refinementMaxQuantizer = 12
}
