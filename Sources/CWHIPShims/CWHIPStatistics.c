// What the receiver's RTCP reports say, from webrtcbin's statistics.

#include "CWHIPSessionPrivate.h"

#include <string.h>

/// One statistics entry of webrtcbin's get-stats reply.
static gboolean read_stats_entry(GQuark field, const GValue *value, gpointer user) {
    (void)field;
    CWHIPReceiverReport *report = user;
    if (!GST_VALUE_HOLDS_STRUCTURE(value)) return TRUE;
    const GstStructure *entry = gst_value_get_structure(value);
    GstWebRTCStatsType type = 0;
    if (!gst_structure_get(entry, "type", GST_TYPE_WEBRTC_STATS_TYPE, &type, NULL)) return TRUE;
    if (type == GST_WEBRTC_STATS_REMOTE_INBOUND_RTP) {
        double number = 0;
        gint lost = 0;
        if (gst_structure_get_double(entry, "fraction-lost", &number)) { report->fraction_lost = number; report->has_report = 1; }
        if (gst_structure_get_double(entry, "round-trip-time", &number)) report->round_trip_seconds = number;
        if (gst_structure_get_double(entry, "jitter", &number)) report->jitter_seconds = number;
        if (gst_structure_get_int(entry, "packets-lost", &lost)) report->packets_lost = lost;
    } else if (type == GST_WEBRTC_STATS_OUTBOUND_RTP) {
        guint64 bytes = 0;
        if (gst_structure_get_uint64(entry, "bytes-sent", &bytes)) report->bytes_sent = bytes;
    }
    return TRUE;
}

int CWHIP_receiver_report(CWHIPSession *session, CWHIPReceiverReport *report) {
    memset(report, 0, sizeof *report);
    report->round_trip_seconds = -1;
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(session->webrtc, "get-stats", NULL, promise);
    if (gst_promise_wait(promise) != GST_PROMISE_RESULT_REPLIED) {
        gst_promise_unref(promise);
        return -1;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply) gst_structure_foreach(reply, read_stats_entry, report);
    gst_promise_unref(promise);
    return report->has_report ? 0 : -1;
}
