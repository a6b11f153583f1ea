public import ScreenWire

extension StreamRouter {
    public enum Action {
        /// Write a media frame to a subscriber; report ``frameDelivered(to:streamId:now:)`` when written.
        /// `clearingLayer`: the subscriber does not read layer ids, so the frame goes with its layer bits cleared.
        /// `catchUp`: the frame goes with its catch-up flag set (a cached picture to decode, not to show).
        case sendFrame(Frame, to: String, streamId: UInt32, clearingLayer: Bool, catchUp: Bool = false)
        /// Write an audio frame to a subscriber; report ``audioFrameDelivered(to:streamId:)`` when written.
        case sendAudio(Frame, to: String, streamId: UInt32)
        case sendControl(ControlMessage, to: String)
        /// Close a connection after sending it an error.
        case close(String, WireErrorCode, String)
        /// A subscription ended: what was queued for it and not yet written goes (its deliveries are not reported).
        case discardQueued(String, streamId: UInt32)
        /// Drop a connection now, with what is queued for it: it does not read (``Limits/stallSeconds``).
        case evict(String, reason: String)
    }
}

/// Why a keyframe was asked of a publisher (`screenrelay_keyframe_requests_total{cause}`).
public enum KeyframeCause: String, Sendable, CaseIterable {
    /// A subscriber joined and no cached pictures could start it.
    case newSubscriber = "new_subscriber"
    /// A subscriber fell so far behind that not even layer 0 fitted, and has drained since.
    case subscriberBehind = "subscriber_behind"
    /// A subscriber asked (`requestKeyframe`: its decoder failed).
    case subscriberAsked = "subscriber_asked"
    /// The relay itself: a recording starts, or an HLS segment is due.
    case relay
}
