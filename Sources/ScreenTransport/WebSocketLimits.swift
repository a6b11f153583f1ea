import ScreenMedia
import ScreenWire

/// Sizes both ends of a relay WebSocket keep to.
public enum WebSocketLimits {
    /// The largest WebSocket frame: a longer message is sent in fragments of this size, so that a relay can
    /// refuse an oversized message after one fragment instead of buffering all of it.
    public static let maximumFrameSize = 64 << 10
    /// The largest message: a media frame's header, its metadata and the largest payload.
    public static let maximumMessageSize = MediaFrameHeader.size + FrameMetadata.maximumSize + MediaFrameHeader.maximumPayload
}
