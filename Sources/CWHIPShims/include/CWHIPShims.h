#ifndef CWHIPSHIMS_H
#define CWHIPSHIMS_H

#include <stddef.h>
#include <stdint.h>

/// One WebRTC send session for WHIP: already-encoded VP8 or VP9 frames → RTP payloader → GStreamer's webrtcbin
/// (one sendonly video transceiver, max-bundle, no UPnP). The header hides GStreamer and GLib.
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

/// Builds and starts the pipeline for `codec` (8: VP8, 9: VP9, 264: H.264), makes the offer and waits until ICE has gathered
/// every candidate (at most `timeout_ms`). `stun_url` ("stun://host:port") and `turn_urls` (each
/// "turn(s)://user:password@host:port") may be NULL / empty. NULL on failure, with a sentence in `error`.
CWHIPSession *CWHIP_start(int codec, const char *stun_url, const char *const *turn_urls, size_t turn_count, int timeout_ms,
    CWHIPKeyframeRequest on_keyframe_request, CWHIPStateChange on_state_change, void *context, char *error,
    size_t error_size);

/// The complete offer (every candidate in it), owned by the session.
const char *CWHIP_offer(const CWHIPSession *session);

/// Applies the endpoint's answer; 0 on success, else -1 with a sentence in `error`.
int CWHIP_set_answer(CWHIPSession *session, const char *sdp, char *error, size_t error_size);

/// Queues one encoded frame (copied; timestamped on arrival); 0 on success.
int CWHIP_push(CWHIPSession *session, const uint8_t *data, size_t size, int keyframe);

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
