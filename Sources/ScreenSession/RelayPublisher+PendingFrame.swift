import ScreenMedia
import ScreenWire

/// A queued frame from the capture thread, and its header on the wire: one way for the share's own frames and its
/// rendition's.
extension RelayPublisher.PendingFrame {
    /// A copy of `frame` (its payload is lent for the call only).
    init(_ frame: EncodedFrame) {
        (codec, payload, isKeyframe, width, height) = (frame.codec, frame.payloadBytes, frame.isKeyframe, frame.width, frame.height)
        (captureTime, wallClockMilliseconds) = (frame.captureTime, frame.wallClock.millisecondsSince1970)
        (metadata, temporalLayer) = (frame.metadata, frame.temporalLayer)
    }

    /// Its header as stream `streamId`'s frame `sequence`, with its layer id for a relay that reads them.
    func header(streamId: UInt32, sequence: UInt64, readsLayers: Bool) -> MediaFrameHeader {
        MediaFrameHeader(
            streamID: streamId, sequence: sequence,
            flags: (isKeyframe ? MediaFrameHeader.Flags.keyframe : []).union(readsLayers ? .layer(temporalLayer) : []),
            codec: codec, width: width, height: height, captureTime: captureTime,
            wallClockMilliseconds: wallClockMilliseconds, metadata: metadata, payloadLength: payload.count)
    }
}
