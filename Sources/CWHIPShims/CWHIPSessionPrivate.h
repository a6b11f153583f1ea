// The WHIP session's layout, shared by the shim's C files (not part of its public header).
#ifndef CWHIPSESSIONPRIVATE_H
#define CWHIPSESSIONPRIVATE_H

#include "CWHIPShims.h"

#define GST_USE_UNSTABLE_API
#include <gst/gst.h>
#include <gst/webrtc/webrtc.h>

/// A metadata message waiting for its frame's first RTP packet (matched by the frame's PTS).
typedef struct {
    GstClockTime pts;
    guint8 bytes[64];
    gsize size;
    gsize timestamp_offset;
} PendingMessage;

/// At most this many messages wait (appsrc holds at most 60 frames): the oldest is given up past it.
#define PENDING_CAPACITY 64

struct CWHIPSession {
    GstElement *pipeline;
    GstElement *source;
    GstElement *audio_source;
    GstElement *webrtc;
    GstWebRTCDataChannel *channel;
    GMutex pending_lock;
    PendingMessage pending[PENDING_CAPACITY];
    guint pending_head, pending_count;
    guint64 messages_sent, messages_unsent;
    gchar *offer;
    CWHIPKeyframeRequest on_keyframe_request;
    CWHIPStateChange on_state_change;
    void *context;
    /// Monotonic time (µs) of the last RTCP packet from the receiver; 0: none yet.
    gint64 last_rtcp;
};

/// Queues `message` for the frame stamped `pts` (the oldest is given up when full).
void CWHIP_queue_message(CWHIPSession *session, GstClockTime pts, const uint8_t *message, size_t size, size_t timestamp_offset);

/// The video payloader's source pad probe: sends each frame's message as its first packet passes.
GstPadProbeReturn CWHIP_on_video_packets(GstPad *pad, GstPadProbeInfo *info, gpointer user);

#endif
