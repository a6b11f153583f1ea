// WHIP's media side on GStreamer: appsrc (already-encoded VP8/VP9/H.264) → rtpvp8pay / rtpvp9pay / rtph264pay →
// webrtcbin; optionally appsrc (Opus) → rtpopuspay → webrtcbin, and a data channel for the frames' metadata.
// Swift cannot emit GObject signals or set properties (variadic C), so the whole negotiation lives here and
// is driven synchronously with GstPromise waits; webrtcbin and its libnice agent run their own threads.

#include "CWHIPShims.h"

#define GST_USE_UNSTABLE_API
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>
#include <stdio.h>
#include <string.h>

#include "CWHIPSessionPrivate.h"

/// webrtcbin's connection-state changed.
static void on_connection_state(GObject *object, GParamSpec *spec, gpointer user) {
    (void)object; (void)spec;
    CWHIPSession *session = user;
    if (session->on_state_change) session->on_state_change(session->context);
}

/// Every bus message passes here on the thread that posts it: an error is a change of state (CWHIP_state reads it
/// from the bus, where it stays queued).
static GstBusSyncReply on_bus_message(GstBus *bus, GstMessage *message, gpointer user) {
    (void)bus;
    CWHIPSession *session = user;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR && session->on_state_change) session->on_state_change(session->context);
    return GST_BUS_PASS;
}

/// An RTCP packet (the SFU's receiver reports) reaches rtpbin.
static GstPadProbeReturn on_rtcp(GstPad *pad, GstPadProbeInfo *info, gpointer user) {
    (void)pad; (void)info;
    CWHIPSession *session = user;
    __atomic_store_n(&session->last_rtcp, g_get_monotonic_time(), __ATOMIC_RELAXED);
    return GST_PAD_PROBE_OK;
}

/// webrtcbin's rtpbin, found among its children.
static GstElement *find_rtpbin(GstElement *webrtc) {
    GstIterator *iterator = gst_bin_iterate_recurse(GST_BIN(webrtc));
    GValue item = G_VALUE_INIT;
    GstElement *found = NULL;
    while (!found && gst_iterator_next(iterator, &item) == GST_ITERATOR_OK) {
        GstElement *element = g_value_get_object(&item);
        GstElementFactory *factory = gst_element_get_factory(element);
        if (factory && g_strcmp0(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)), "rtpbin") == 0) found = gst_object_ref(element);
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(iterator);
    return found;
}

static void say(char *error, size_t size, const char *format, const char *detail) {
    if (error && size) snprintf(error, size, format, detail ? detail : "");
}

static gboolean initialise(void) {
    static gsize done = 0;
    static gboolean ok = FALSE;
    if (g_once_init_enter(&done)) {
        ok = gst_init_check(NULL, NULL, NULL);
        g_once_init_leave(&done, 1);
    }
    return ok;
}

/// An upstream GstForceKeyUnit (the receiver's PLI or FIR, through webrtcbin and the payloader) reaches appsrc.
static GstPadProbeReturn on_upstream_event(GstPad *pad, GstPadProbeInfo *info, gpointer user) {
    (void)pad;
    CWHIPSession *session = user;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_UPSTREAM) {
        const GstStructure *structure = gst_event_get_structure(event);
        if (structure && gst_structure_has_name(structure, "GstForceKeyUnit") && session->on_keyframe_request) {
            session->on_keyframe_request(session->context);
        }
    }
    return GST_PAD_PROBE_OK;
}

/// Waits for a promise and returns its reply (owned by the promise), or NULL with the reason in `error`.
/// Makes the transceiver that linking `pad_name` of webrtcbin made send-only, with `preferences` (caps) as its
/// codec preferences: what the offer then says of that media.
static void send_only(GstElement *webrtc, const char *pad_name, const char *preferences) {
    GstCaps *caps = gst_caps_from_string(preferences);
    GstPad *pad = gst_element_get_static_pad(webrtc, pad_name);
    GstWebRTCRTPTransceiver *transceiver = NULL;
    if (pad) g_object_get(pad, "transceiver", &transceiver, NULL);
    if (transceiver) {
        g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, "codec-preferences", caps, NULL);
        gst_object_unref(transceiver);
    }
    if (pad) gst_object_unref(pad);
    if (caps) gst_caps_unref(caps);
}

static const GstStructure *await(GstPromise *promise, const char *what, char *error, size_t size) {
    GstPromiseResult result = gst_promise_wait(promise);
    if (result != GST_PROMISE_RESULT_REPLIED) {
        say(error, size, "%s did not complete", what);
        return NULL;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply && gst_structure_has_field(reply, "error")) {
        GError *failure = NULL;
        gst_structure_get(reply, "error", G_TYPE_ERROR, &failure, NULL);
        char text[256];
        snprintf(text, sizeof text, "%s: %s", what, failure ? failure->message : "failed");
        if (failure) g_error_free(failure);
        say(error, size, "%s", text);
        return NULL;
    }
    return reply;
}

CWHIPSession *CWHIP_start(int codec, CWHIPExtras extras, const char *stun_url, const char *const *turn_urls, size_t turn_count, int timeout_ms,
    CWHIPKeyframeRequest on_keyframe_request, CWHIPStateChange on_state_change, void *context, char *error,
    size_t error_size) {
    if (error && error_size) error[0] = 0;
    if (!initialise()) {
        say(error, error_size, "%s", "GStreamer cannot start");
        return NULL;
    }
    const char *name = codec == 8 ? "VP8" : codec == 264 ? "H264" : "VP9";
    // H.264 goes as screenpub makes it: Annex B access units with the SPS and PPS before each IDR (sent in band
    // again with each, config-interval -1), one packet train per frame as soon as it is whole.
    // The caps name the profile and level offered below (42e01f): the payloader's sink takes only what the codec
    // preferences allow, and without them it refuses the first frame once the preferences are set. The level is
    // the offer's, not the SPS's: with level-asymmetry-allowed the receiver takes a higher one (1080p is 4.0), and
    // the payloader does not read the level; the SPS in band says the truth.
    const char *source_caps = codec == 8 ? "video/x-vp8"
        : codec == 264 ? "video/x-h264,stream-format=byte-stream,alignment=au,profile=constrained-baseline,level=(string)3.1"
                       : "video/x-vp9";
    const char *payloader = codec == 8 ? "rtpvp8pay picture-id-mode=15-bit"
        : codec == 264 ? "rtph264pay config-interval=-1 aggregate-mode=zero-latency" : "rtpvp9pay picture-id-mode=15-bit";
    // Constrained Baseline, what screenpub's H.264 is and what every WebRTC receiver decodes.
    const char *format = codec == 264 ? ",packetization-mode=(string)1,profile-level-id=(string)42e01f,level-asymmetry-allowed=(string)1" : "";
    // The source's queue is bounded (60 frames, the oldest dropped past it: a stalled network never grows it, and
    // the SFU's next keyframe request mends the picture). One SSRC in the offer and in the packets: an SFU that
    // maps streams by the SDP's a=ssrc (Janus) drops packets of another, and addresses its keyframe requests to
    // the one it knows.
    // Buffers carry their capture time as PTS (the pipeline runs on CLOCK_MONOTONIC, the capture clock), so the
    // payloaders' RTP timestamps of video and sound share one time base and RTCP maps them to one wall clock.
    guint32 ssrc = g_random_int_range(1, G_MAXINT32);
    guint32 audio_ssrc = ssrc ^ 0x5a5a5a5a;
    int channels = extras.audio_channels == 1 ? 1 : 2;
    char audio[512] = "";
    if (extras.audio_channels > 0)
        snprintf(audio, sizeof audio,
            " appsrc name=audio is-live=true format=time do-timestamp=false max-buffers=50 max-bytes=0 leaky-type=downstream "
            "caps=audio/x-opus,channel-mapping-family=0,channels=%d,rate=48000 "
            "! rtpopuspay mtu=1200 ssrc=%u ! application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,ssrc=(uint)%u "
            "! webrtc.sink_1",
            channels, audio_ssrc, audio_ssrc);
    char description[1400];
    snprintf(description, sizeof description,
        "webrtcbin name=webrtc bundle-policy=max-bundle "
        "appsrc name=source is-live=true format=time do-timestamp=false max-buffers=60 max-bytes=0 leaky-type=downstream caps=%s "
        "! %s name=payloader mtu=1200 ssrc=%u "
        "! application/x-rtp,media=video,encoding-name=%s,payload=96,clock-rate=90000,ssrc=(uint)%u "
        "! webrtc.sink_0%s",
        source_caps, payloader, ssrc, name, ssrc, audio);
    GError *failure = NULL;
    GstElement *pipeline = gst_parse_launch(description, &failure);
    // A missing element (plugin not installed) may still give a partial pipeline, with the error set.
    if (!pipeline || failure) {
        char text[256];
        snprintf(text, sizeof text, "%s", failure ? failure->message : "unknown error");
        if (failure) g_error_free(failure);
        if (pipeline) gst_object_unref(pipeline);
        say(error, error_size,
            "the WebRTC pipeline cannot be built (%s): install gstreamer1.0-plugins-bad, gstreamer1.0-plugins-good and gstreamer1.0-nice",
            text);
        return NULL;
    }

    GstClock *clock = g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type", GST_CLOCK_TYPE_MONOTONIC, NULL);
    gst_object_ref_sink(clock);
    gst_pipeline_use_clock(GST_PIPELINE(pipeline), clock);
    gst_object_unref(clock);

    CWHIPSession *session = g_new0(CWHIPSession, 1);
    g_mutex_init(&session->pending_lock);
    session->pipeline = pipeline;
    session->source = gst_bin_get_by_name(GST_BIN(pipeline), "source");
    session->audio_source = extras.audio_channels > 0 ? gst_bin_get_by_name(GST_BIN(pipeline), "audio") : NULL;
    session->webrtc = gst_bin_get_by_name(GST_BIN(pipeline), "webrtc");
    session->on_keyframe_request = on_keyframe_request;
    session->on_state_change = on_state_change;
    session->context = context;
    if (!session->source || !session->webrtc || (extras.audio_channels > 0 && !session->audio_source)) {
        say(error, error_size, "%s", "the WebRTC pipeline is incomplete");
        CWHIP_stop(session);
        return NULL;
    }

    // State changes and pipeline errors are reported as they happen, not polled for.
    g_signal_connect(session->webrtc, "notify::connection-state", G_CALLBACK(on_connection_state), session);
    GstBus *bus = gst_element_get_bus(pipeline);
    gst_bus_set_sync_handler(bus, on_bus_message, session, NULL);
    gst_object_unref(bus);

    // Nothing leaves for the internet: no UPnP port mapping (libnice would send SSDP), STUN/TURN only as given.
    GObject *ice = NULL;
    g_object_get(session->webrtc, "ice-agent", &ice, NULL);
    if (ice) {
        GObject *agent = NULL;
        if (g_object_class_find_property(G_OBJECT_GET_CLASS(ice), "agent")) g_object_get(ice, "agent", &agent, NULL);
        if (agent) {
            g_object_set(agent, "upnp", FALSE, NULL);
            // An SFU that vanishes (killed, unplugged) sends no goodbye: keepalives that need an answer let ICE
            // notice and fail the connection, so that a new session is made.
            if (g_object_class_find_property(G_OBJECT_GET_CLASS(agent), "keepalive-conncheck"))
                g_object_set(agent, "keepalive-conncheck", TRUE, NULL);
            g_object_unref(agent);
        }
        g_object_unref(ice);
    }
    if (stun_url && *stun_url) g_object_set(session->webrtc, "stun-server", stun_url, NULL);
    for (size_t index = 0; index < turn_count; index++) {
        gboolean added = FALSE;
        g_signal_emit_by_name(session->webrtc, "add-turn-server", turn_urls[index], &added);
    }

    GstPad *source_pad = gst_element_get_static_pad(session->source, "src");
    gst_pad_add_probe(source_pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, on_upstream_event, session, NULL);
    gst_object_unref(source_pad);
    GstElement *payloader_element = gst_bin_get_by_name(GST_BIN(pipeline), "payloader");
    if (payloader_element) {
        GstPad *packets = gst_element_get_static_pad(payloader_element, "src");
        gst_pad_add_probe(packets, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, CWHIP_on_video_packets, session, NULL);
        gst_object_unref(packets);
        gst_object_unref(payloader_element);
    }
    // RTCP sender reports map RTP time to the wall clock at capture (the buffers' running time), not at sending:
    // a receiver then lines sound up with the picture captured with it, whatever each took to encode.
    GstElement *rtpbin = find_rtpbin(session->webrtc);
    if (rtpbin) {
        g_object_set(rtpbin, "rtcp-sync-send-time", FALSE, NULL);
        gst_object_unref(rtpbin);
    }

    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        say(error, error_size, "%s", "the WebRTC pipeline does not start");
        CWHIP_stop(session);
        return NULL;
    }

    // One send-only transceiver (the one the payloader's link made), its codec given up front so that the
    // offer can be made before the first frame has set caps.
    // PLI and FIR (the SFU's keyframe requests), NACK, and REMB: the SFU's receiver then reports regularly, which
    // is how a vanished SFU is noticed (CWHIP_seconds_since_rtcp).
    char preferences[512];
    snprintf(preferences, sizeof preferences,
        "application/x-rtp,media=video,encoding-name=%s,payload=96,clock-rate=90000,ssrc=(uint)%u,rtcp-fb-nack=true,"
        "rtcp-fb-nack-pli=true,rtcp-fb-ccm-fir=true,rtcp-fb-goog-remb=true%s",
        name, ssrc, format);
    send_only(session->webrtc, "sink_0", preferences);
    if (extras.audio_channels > 0) {
        // The sound's transceiver (the one sink_1's link made): Opus as WebRTC knows it (always "/2" in SDP).
        char audio_preferences[256];
        snprintf(audio_preferences, sizeof audio_preferences,
            "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2,ssrc=(uint)%u",
            audio_ssrc);
        send_only(session->webrtc, "sink_1", audio_preferences);
    }
    if (extras.metadata_channel) {
        // Made before the offer, so that the one offer carries it (m=application). Unordered and never
        // retransmitted: a metadata message that comes late is worth nothing to a picture already shown.
        GstStructure *options = gst_structure_new("options", "ordered", G_TYPE_BOOLEAN, FALSE, "max-retransmits", G_TYPE_INT, 0, NULL);
        g_signal_emit_by_name(session->webrtc, "create-data-channel", "screenpub-metadata", options, &session->channel);
        gst_structure_free(options);
        if (!session->channel) {
            say(error, error_size, "%s", "webrtcbin made no data channel for the frame metadata");
            CWHIP_stop(session);
            return NULL;
        }
    }

    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(session->webrtc, "create-offer", NULL, promise);
    const GstStructure *reply = await(promise, "creating the WebRTC offer", error, error_size);
    GstWebRTCSessionDescription *offer = NULL;
    if (reply) gst_structure_get(reply, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    gst_promise_unref(promise);
    if (!offer) {
        if (reply) say(error, error_size, "%s", "webrtcbin made no offer");
        CWHIP_stop(session);
        return NULL;
    }
    promise = gst_promise_new();
    g_signal_emit_by_name(session->webrtc, "set-local-description", offer, promise);
    reply = await(promise, "setting the local description", error, error_size);
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(offer);
    if (!reply && error && *error) {
        CWHIP_stop(session);
        return NULL;
    }

    // WHIP sends one offer with every candidate in it: wait for gathering to finish.
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    GstWebRTCICEGatheringState gathering = GST_WEBRTC_ICE_GATHERING_STATE_NEW;
    while (g_get_monotonic_time() < deadline) {
        g_object_get(session->webrtc, "ice-gathering-state", &gathering, NULL);
        if (gathering == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) break;
        g_usleep(20 * 1000);
    }
    if (gathering != GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) {
        say(error, error_size, "%s", "ICE did not finish gathering candidates in time (is a STUN or TURN server unreachable?)");
        CWHIP_stop(session);
        return NULL;
    }
    GstWebRTCSessionDescription *local = NULL;
    g_object_get(session->webrtc, "local-description", &local, NULL);
    if (!local) {
        say(error, error_size, "%s", "webrtcbin lost its offer");
        CWHIP_stop(session);
        return NULL;
    }
    session->offer = gst_sdp_message_as_text(local->sdp);
    gst_webrtc_session_description_free(local);
    return session;
}

const char *CWHIP_offer(const CWHIPSession *session) { return session->offer; }

int CWHIP_set_answer(CWHIPSession *session, const char *sdp, char *error, size_t error_size) {
    GstSDPMessage *message = NULL;
    if (gst_sdp_message_new_from_text(sdp, &message) != GST_SDP_OK || !message) {
        say(error, error_size, "%s", "the answer is not SDP");
        return -1;
    }
    GstWebRTCSessionDescription *answer = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(session->webrtc, "set-remote-description", answer, promise);
    if (error && error_size) error[0] = 0;
    const GstStructure *reply = await(promise, "applying the answer", error, error_size);
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(answer);
    if (!reply && error && *error) return -1;
    // The receiving side of the RTP session exists now: watch its RTCP.
    GstElement *rtpbin = find_rtpbin(session->webrtc);
    if (rtpbin) {
        GstPad *rtcp = gst_element_get_static_pad(rtpbin, "recv_rtcp_sink_0");
        if (rtcp) {
            gst_pad_add_probe(rtcp, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, on_rtcp, session, NULL);
            gst_object_unref(rtcp);
        }
        gst_object_unref(rtpbin);
    }
    return 0;
}

/// `capture_ns` as the pipeline's running time (its clock is CLOCK_MONOTONIC); GST_CLOCK_TIME_NONE when it comes
/// before the pipeline started.
static GstClockTime running_time(CWHIPSession *session, int64_t capture_ns) {
    GstClockTime base = gst_element_get_base_time(session->pipeline);
    if (capture_ns < 0 || (guint64)capture_ns < base) return GST_CLOCK_TIME_NONE;
    return (guint64)capture_ns - base;
}

int CWHIP_push(CWHIPSession *session, const uint8_t *data, size_t size, int keyframe, int64_t capture_ns,
    const uint8_t *message, size_t message_size, size_t timestamp_offset) {
    GstClockTime pts = running_time(session, capture_ns);
    if (!GST_CLOCK_TIME_IS_VALID(pts)) return 1;
    GstBuffer *buffer = gst_buffer_new_memdup(data, size);
    GST_BUFFER_PTS(buffer) = pts;
    if (!keyframe) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    // Queued before the frame, so that the payloader's first packet of it finds its message.
    if (session->channel && message) CWHIP_queue_message(session, pts, message, message_size, timestamp_offset);
    return gst_app_src_push_buffer(GST_APP_SRC(session->source), buffer) == GST_FLOW_OK ? 0 : -1;
}

int CWHIP_push_audio(CWHIPSession *session, const uint8_t *data, size_t size, int64_t capture_ns, int samples) {
    if (!session->audio_source) return -1;
    GstClockTime pts = running_time(session, capture_ns);
    if (!GST_CLOCK_TIME_IS_VALID(pts)) return 1;
    GstBuffer *buffer = gst_buffer_new_memdup(data, size);
    GST_BUFFER_PTS(buffer) = pts;
    if (samples > 0) GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale_int((guint64)samples, GST_SECOND, 48000);
    return gst_app_src_push_buffer(GST_APP_SRC(session->audio_source), buffer) == GST_FLOW_OK ? 0 : -1;
}

int CWHIP_state(CWHIPSession *session, char *error, size_t error_size) {
    GstBus *bus = gst_element_get_bus(session->pipeline);
    GstMessage *message;
    int failed = 0;
    while ((message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) != NULL) {
        GError *failure = NULL;
        gst_message_parse_error(message, &failure, NULL);
        say(error, error_size, "%s", failure ? failure->message : "pipeline error");
        if (failure) g_error_free(failure);
        gst_message_unref(message);
        failed = 1;
    }
    gst_object_unref(bus);
    if (failed) return CWHIP_STATE_FAILED;
    GstWebRTCPeerConnectionState state = GST_WEBRTC_PEER_CONNECTION_STATE_NEW;
    g_object_get(session->webrtc, "connection-state", &state, NULL);
    return (int)state;
}

double CWHIP_seconds_since_rtcp(CWHIPSession *session) {
    gint64 last = __atomic_load_n(&session->last_rtcp, __ATOMIC_RELAXED);
    return last == 0 ? -1 : (double)(g_get_monotonic_time() - last) / 1e6;
}

void CWHIP_stop(CWHIPSession *session) {
    if (!session) return;
    // No callback after this returns: the caller frees what `context` points to.
    if (session->webrtc) g_signal_handlers_disconnect_by_data(session->webrtc, session);
    GstBus *bus = gst_element_get_bus(session->pipeline);
    gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
    gst_object_unref(bus);
    gst_element_set_state(session->pipeline, GST_STATE_NULL);
    if (session->source) gst_object_unref(session->source);
    if (session->audio_source) gst_object_unref(session->audio_source);
    if (session->channel) g_object_unref(session->channel);
    if (session->webrtc) gst_object_unref(session->webrtc);
    gst_object_unref(session->pipeline);
    g_free(session->offer);
    g_mutex_clear(&session->pending_lock);
    g_free(session);
}

