// The frame metadata's data channel: a message per frame, sent as the frame's first RTP packet leaves the
// payloader, with that packet's RTP timestamp written into it.

#include "CWHIPSessionPrivate.h"

#include <gst/rtp/gstrtpbuffer.h>
#include <string.h>

void CWHIP_queue_message(CWHIPSession *session, GstClockTime pts, const uint8_t *message, size_t size, size_t timestamp_offset) {
    if (size > sizeof(((PendingMessage *)0)->bytes) || timestamp_offset + 4 > size) return;
    g_mutex_lock(&session->pending_lock);
    if (session->pending_count == PENDING_CAPACITY) {
        session->pending_head = (session->pending_head + 1) % PENDING_CAPACITY;
        session->pending_count--;
        session->messages_unsent++;
    }
    PendingMessage *entry = &session->pending[(session->pending_head + session->pending_count) % PENDING_CAPACITY];
    entry->pts = pts;
    memcpy(entry->bytes, message, size);
    entry->size = size;
    entry->timestamp_offset = timestamp_offset;
    session->pending_count++;
    g_mutex_unlock(&session->pending_lock);
}

/// A frame's first RTP packet leaves the payloader: its metadata message goes on the data channel first, with the
/// packet's own RTP timestamp (what a receiver's requestVideoFrameCallback reports, less the SFU's constant offset).
GstPadProbeReturn CWHIP_on_video_packets(GstPad *pad, GstPadProbeInfo *info, gpointer user) {
    (void)pad;
    CWHIPSession *session = user;
    GstBuffer *first = NULL;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) first = GST_PAD_PROBE_INFO_BUFFER(info);
    else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        if (list && gst_buffer_list_length(list) > 0) first = gst_buffer_list_get(list, 0);
    }
    if (!first || !GST_BUFFER_PTS_IS_VALID(first)) return GST_PAD_PROBE_OK;
    GstClockTime pts = GST_BUFFER_PTS(first);
    PendingMessage message;
    gboolean found = FALSE;
    g_mutex_lock(&session->pending_lock);
    // Older entries are frames appsrc dropped (its queue is leaky): their messages are worth nothing now.
    while (session->pending_count > 0 && session->pending[session->pending_head].pts < pts) {
        session->pending_head = (session->pending_head + 1) % PENDING_CAPACITY;
        session->pending_count--;
        session->messages_unsent++;
    }
    if (session->pending_count > 0 && session->pending[session->pending_head].pts == pts) {
        message = session->pending[session->pending_head];
        session->pending_head = (session->pending_head + 1) % PENDING_CAPACITY;
        session->pending_count--;
        found = TRUE;
    }
    g_mutex_unlock(&session->pending_lock);
    if (!found) return GST_PAD_PROBE_OK;
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    gboolean sent = FALSE;
    if (gst_rtp_buffer_map(first, GST_MAP_READ, &rtp)) {
        guint32 timestamp = gst_rtp_buffer_get_timestamp(&rtp);
        gst_rtp_buffer_unmap(&rtp);
        message.bytes[message.timestamp_offset] = (guint8)(timestamp >> 24);
        message.bytes[message.timestamp_offset + 1] = (guint8)(timestamp >> 16);
        message.bytes[message.timestamp_offset + 2] = (guint8)(timestamp >> 8);
        message.bytes[message.timestamp_offset + 3] = (guint8)timestamp;
        GstWebRTCDataChannelState state = GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED;
        g_object_get(session->channel, "ready-state", &state, NULL);
        if (state == GST_WEBRTC_DATA_CHANNEL_STATE_OPEN) {
            GBytes *bytes = g_bytes_new(message.bytes, message.size);
            sent = gst_webrtc_data_channel_send_data_full(session->channel, bytes, NULL);
            g_bytes_unref(bytes);
        }
    }
    g_mutex_lock(&session->pending_lock);
    if (sent) session->messages_sent++; else session->messages_unsent++;
    g_mutex_unlock(&session->pending_lock);
    return GST_PAD_PROBE_OK;
}

int CWHIP_metadata_channel_state(CWHIPSession *session) {
    if (!session->channel) return 0;
    GstWebRTCDataChannelState state = GST_WEBRTC_DATA_CHANNEL_STATE_CONNECTING;
    g_object_get(session->channel, "ready-state", &state, NULL);
    switch (state) {
    case GST_WEBRTC_DATA_CHANNEL_STATE_OPEN: return 1;
    case GST_WEBRTC_DATA_CHANNEL_STATE_CLOSING:
    case GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED: return 2;
    default: return 0;
    }
}

void CWHIP_metadata_counts(CWHIPSession *session, uint64_t *sent, uint64_t *unsent) {
    g_mutex_lock(&session->pending_lock);
    *sent = session->messages_sent;
    *unsent = session->messages_unsent;
    g_mutex_unlock(&session->pending_lock);
}

