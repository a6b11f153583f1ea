#ifndef CWHIPSHIMS_H
#define CWHIPSHIMS_H

#include <stddef.h>
#include <stdint.h>

/// One WebRTC send session for WHIP: already-encoded VP8/VP9/H.264 frames → RTP payloader → GStreamer's webrtcbin
/// (a sendonly video transceiver, optionally a sendonly Opus one and a data channel for frame metadata; max-bundle,
/// no UPnP). The header hides GStreamer and GLib.
typedef struct CWHIPSession CWHIPSession;

/// Called on a GStreamer thread when the receiver asks for a keyframe (an upstream GstForceKeyUnit event).
typedef void (*CWHIPKeyframeRequest)(void *context);

/// Called on a GStreamer thread when the peer connection's state changes or the pipeline posts an error: read
/// CWHIP_state then (no polling needed).
typedef void (*CWHIPStateChange)(void *context);

/// Connection states, as webrtcbin's GstWebRTCPeerConnectionState.
enum {
    CWHIP_STATE_NEW = 0, CWHIP_STATE_CONNECTING = 1, CWHIP_STATE_CONNECTED = 2, CWHIP_STATE_DISCONNECTED = 3,
    CWHIP_STATE_FAILED = 4, CWHIP_STATE_CLOSED = 5,
};

/// What a session carries besides its video.
typedef struct {
    /// Opus channels of a second, sendonly audio transceiver (1 or 2); 0: no sound.
    int audio_channels;
    /// Non-zero: a data channel ("screenpub-metadata", unordered, no retransmits) for the frames' metadata messages.
    int metadata_channel;
} CWHIPExtras;

/// Builds and starts the pipeline for `codec` (8: VP8, 9: VP9, 264: H.264), makes the offer and waits until ICE has gathered
/// every candidate (at most `timeout_ms`). `stun_url` ("stun://host:port") and `turn_urls` (each
/// "turn(s)://user:password@host:port") may be NULL / empty. NULL on failure, with a sentence in `error`.
CWHIPSession *CWHIP_start(int codec, CWHIPExtras extras, const char *stun_url, const char *const *turn_urls, size_t turn_count, int timeout_ms,
    CWHIPKeyframeRequest on_keyframe_request, CWHIPStateChange on_state_change, void *context, char *error,
    size_t error_size);

/// The complete offer (every candidate in it), owned by the session.
const char *CWHIP_offer(const CWHIPSession *session);

/// Applies the endpoint's answer; 0 on success, else -1 with a sentence in `error`.
int CWHIP_set_answer(CWHIPSession *session, const char *sdp, char *error, size_t error_size);

/// Queues one encoded frame (copied) captured at `capture_ns` (CLOCK_MONOTONIC nanoseconds: the pipeline's clock, so
/// that video and sound share one RTP time base). With a metadata channel, `message` (copied; may be NULL) goes on it
/// just before the frame's first RTP packet leaves the payloader, the packet's RTP timestamp written big-endian into
/// its 4 bytes at `timestamp_offset`. 0 on success; 1: dropped (captured before the pipeline started); -1: refused.
int CWHIP_push(CWHIPSession *session, const uint8_t *data, size_t size, int keyframe, int64_t capture_ns,
    const uint8_t *message, size_t message_size, size_t timestamp_offset);

/// Queues one Opus packet of `samples` (at 48 kHz) captured at `capture_ns`; 0 on success, 1 dropped, -1 refused.
int CWHIP_push_audio(CWHIPSession *session, const uint8_t *data, size_t size, int64_t capture_ns, int samples);

/// The metadata channel: 0 none or not open yet, 1 open, 2 closing or closed.
int CWHIP_metadata_channel_state(CWHIPSession *session);

/// Metadata messages handed to the data channel so far, and those not sent (channel not open, or the frame's
/// packets never came).
void CWHIP_metadata_counts(CWHIPSession *session, uint64_t *sent, uint64_t *unsent);

/// The peer connection's state (CWHIP_STATE_*); a pipeline error reads as failed, its text in `error`.
int CWHIP_state(CWHIPSession *session, char *error, size_t error_size);

/// Seconds since the receiver last sent RTCP (its reports come every second or so while it is there); -1
/// before the first.
double CWHIP_seconds_since_rtcp(CWHIPSession *session);

/// What the receiver's RTCP reports say, as webrtcbin's statistics give them (remote-inbound-rtp, outbound-rtp).
typedef struct {
    int has_report;
    /// Of the packets since its previous report, the share lost (0–1); packets lost in all.
    double fraction_lost;
    int packets_lost;
    /// Round trip from our sender report to its receiver report, seconds; -1 when unknown.
    double round_trip_seconds;
    double jitter_seconds;
    /// RTP bytes sent so far.
    uint64_t bytes_sent;
} CWHIPReceiverReport;

/// Fills `report` from webrtcbin's statistics (waits for them); 0 when the receiver has reported, else -1.
int CWHIP_receiver_report(CWHIPSession *session, CWHIPReceiverReport *report);

/// Stops the pipeline and frees the session.
void CWHIP_stop(CWHIPSession *session);

#endif
