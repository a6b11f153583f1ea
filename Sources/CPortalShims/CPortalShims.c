#include "CPortalShims.h"

#include <libportal/portal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CPortalShims_Session {
    GMainContext *context;
    XdpPortal *portal;
    XdpSession *session;
    uint32_t version;
    uint32_t cursorMode;
};

typedef struct {
    GAsyncResult *result;
    gboolean timedOut;
    gboolean stopped;
    const CPortalShims_Request *request;
} Pending;

/// libportal prints its own warnings ("libportal-WARNING **: Failed to get pipewire fd: GDBus.Error…") on
/// standard error; every failure they describe comes back to the caller too, which says it in a sentence.
static void quietLibportal(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

static void onReady(GObject *source, GAsyncResult *result, gpointer data) {
    ((Pending *)data)->result = g_object_ref(result);
}

static gboolean onTimeout(gpointer data) {
    ((Pending *)data)->timedOut = TRUE;
    return G_SOURCE_REMOVE;
}

static gboolean onPoll(gpointer data) {
    Pending *pending = data;
    if (pending->request->shouldStop != NULL && pending->request->shouldStop(pending->request->shouldStopContext))
        pending->stopped = TRUE;
    return G_SOURCE_CONTINUE;
}

/// Iterates `context` until the pending call has answered, `seconds` have passed or shouldStop says so.
static void waitFor(GMainContext *context, Pending *pending, const CPortalShims_Request *request) {
    pending->request = request;
    GSource *timeout = g_timeout_source_new((guint)(request->timeoutSeconds * 1000));
    g_source_set_callback(timeout, onTimeout, pending, NULL);
    g_source_attach(timeout, context);
    GSource *poll = g_timeout_source_new(100);
    g_source_set_callback(poll, onPoll, pending, NULL);
    g_source_attach(poll, context);
    while (pending->result == NULL && !pending->timedOut && !pending->stopped) g_main_context_iteration(context, TRUE);
    g_source_destroy(poll);
    g_source_unref(poll);
    g_source_destroy(timeout);
    g_source_unref(timeout);
}

static CPortalShims_Session *fail(CPortalShims_Session *session, int kind, int *failure, char **message, const char *text) {
    *failure = kind;
    *message = strdup(text);
    if (session->session != NULL) {
        xdp_session_close(session->session);
        g_object_unref(session->session);
    }
    if (session->portal != NULL) g_object_unref(session->portal);
    g_main_context_pop_thread_default(session->context);
    g_main_context_unref(session->context);
    free(session);
    return NULL;
}

/// Asks the portal for its ScreenCast version: tells "no portal" and "no ScreenCast" apart quickly, before
/// anything waits for a user.
static int probe(GDBusConnection *bus, const char *property, uint32_t *value, char **text) {
    GError *error = NULL;
    GVariant *reply = g_dbus_connection_call_sync(
        bus, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.DBus.Properties", "Get",
        g_variant_new("(ss)", "org.freedesktop.portal.ScreenCast", property), G_VARIANT_TYPE("(v)"),
        G_DBUS_CALL_FLAGS_NONE, 25000, NULL, &error);
    if (reply == NULL) {
        gchar *remote = g_dbus_error_get_remote_error(error);
        int kind = CPortalShims_Failed;
        if (remote != NULL && (strcmp(remote, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
                               strcmp(remote, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0 ||
                               strcmp(remote, "org.freedesktop.DBus.Error.Spawn.ChildExited") == 0 ||
                               strcmp(remote, "org.freedesktop.DBus.Error.Spawn.ChildSignaled") == 0)) {
            kind = CPortalShims_NoPortal;
        } else if (remote != NULL && (strcmp(remote, "org.freedesktop.DBus.Error.InvalidArgs") == 0 ||
                                      strcmp(remote, "org.freedesktop.DBus.Error.UnknownInterface") == 0 ||
                                      strcmp(remote, "org.freedesktop.DBus.Error.UnknownProperty") == 0)) {
            kind = CPortalShims_NoScreenCast;
        } else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)) {
            kind = CPortalShims_TimedOut;
        }
        g_dbus_error_strip_remote_error(error);
        *text = g_strdup(error->message);
        g_free(remote);
        g_error_free(error);
        return kind;
    }
    GVariant *variant = NULL;
    g_variant_get(reply, "(v)", &variant);
    *value = g_variant_is_of_type(variant, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32(variant) : 0;
    g_variant_unref(variant);
    g_variant_unref(reply);
    return 0;
}

CPortalShims_Session *CPortalShims_start(const CPortalShims_Request *request, int *failure, char **message) {
    CPortalShims_Session *session = calloc(1, sizeof *session);
    session->context = g_main_context_new();
    g_main_context_push_thread_default(session->context);

    GError *error = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (bus == NULL) {
        char text[512];
        snprintf(text, sizeof text, "no D-Bus session bus: %s", error->message);
        g_error_free(error);
        return fail(session, CPortalShims_NoSessionBus, failure, message, text);
    }
    char *probeText = NULL;
    int probeFailure = probe(bus, "version", &session->version, &probeText);
    uint32_t cursorModes = 0, sourceTypes = 0;
    // Which sources the backend can share: a window asked of one that shares only monitors would come back as a
    // whole monitor from some backends (xdg-desktop-portal-wlr 0.7), more than the user meant to show.
    if (probeFailure == 0 && probe(bus, "AvailableSourceTypes", &sourceTypes, &probeText) != 0) {
        g_free(probeText);
        probeText = NULL;
        sourceTypes = 0;
    }
    if (probeFailure == 0 && session->version >= 2) {
        // Which cursor modes the backend offers (version 2 on): embedded is asked for when offered, else
        // metadata (drawn by us), else hidden.
        if (probe(bus, "AvailableCursorModes", &cursorModes, &probeText) != 0) {
            g_free(probeText);
            probeText = NULL;
            cursorModes = 0;
        }
    }
    g_object_unref(bus);
    if (probeFailure != 0) {
        char text[512];
        snprintf(text, sizeof text, "%s", probeText);
        g_free(probeText);
        return fail(session, probeFailure, failure, message, text);
    }
    if (sourceTypes != 0 && (sourceTypes & request->sourceTypes) == 0) {
        char text[512];
        snprintf(text, sizeof text, "the desktop's ScreenCast portal shares only %s (AvailableSourceTypes %u)",
            sourceTypes == XDP_OUTPUT_MONITOR ? "whole monitors" : sourceTypes == XDP_OUTPUT_WINDOW ? "windows" : "other sources", sourceTypes);
        return fail(session, CPortalShims_SourceUnavailable, failure, message, text);
    }
    // Before version 4 there are no restore tokens or persist modes; asking with them would fail the call.
    const char *restoreToken = session->version >= 4 ? request->restoreToken : NULL;

    session->cursorMode = request->cursorMode;
    if (request->cursorMode == XDP_CURSOR_MODE_EMBEDDED && cursorModes != 0 && !(cursorModes & XDP_CURSOR_MODE_EMBEDDED)) {
        session->cursorMode = (cursorModes & XDP_CURSOR_MODE_METADATA) ? XDP_CURSOR_MODE_METADATA : XDP_CURSOR_MODE_HIDDEN;
    }

    static gsize quieted = 0;
    if (g_once_init_enter(&quieted)) {
        g_log_set_handler("libportal", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, quietLibportal, NULL);
        g_once_init_leave(&quieted, 1);
    }
    session->portal = xdp_portal_new();
    Pending created = {0};
    xdp_portal_create_screencast_session(
        session->portal, request->sourceTypes, XDP_SCREENCAST_FLAG_NONE, session->cursorMode,
        session->version >= 4 ? XDP_PERSIST_MODE_PERSISTENT : XDP_PERSIST_MODE_NONE, restoreToken, NULL, onReady,
        &created);
    waitFor(session->context, &created, request);
    if (created.stopped) return fail(session, CPortalShims_Stopped, failure, message, "stopped while asking the portal");
    if (created.timedOut) return fail(session, CPortalShims_TimedOut, failure, message, "the portal did not answer CreateSession/SelectSources");
    session->session = xdp_portal_create_screencast_session_finish(session->portal, created.result, &error);
    g_object_unref(created.result);
    if (session->session == NULL) {
        int kind = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? CPortalShims_Cancelled : CPortalShims_Failed;
        char text[512];
        snprintf(text, sizeof text, "%s", error->message);
        g_error_free(error);
        return fail(session, kind, failure, message, text);
    }

    Pending started = {0};
    xdp_session_start(session->session, NULL, NULL, onReady, &started);
    waitFor(session->context, &started, request);
    if (started.stopped) return fail(session, CPortalShims_Stopped, failure, message, "stopped while waiting for the screen-sharing dialog");
    if (started.timedOut) return fail(session, CPortalShims_TimedOut, failure, message, "nobody answered the screen-sharing dialog");
    gboolean ok = xdp_session_start_finish(session->session, started.result, &error);
    g_object_unref(started.result);
    if (!ok) {
        int kind = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? CPortalShims_Cancelled : CPortalShims_Failed;
        char text[512];
        snprintf(text, sizeof text, "%s", error->message);
        g_error_free(error);
        return fail(session, kind, failure, message, text);
    }
    if (CPortalShims_streamCount(session) == 0) {
        return fail(session, CPortalShims_Failed, failure, message, "the portal started a screen cast without streams");
    }
    g_main_context_pop_thread_default(session->context);
    return session;
}

uint32_t CPortalShims_version(const CPortalShims_Session *session) { return session->version; }

uint32_t CPortalShims_cursorMode(const CPortalShims_Session *session) { return session->cursorMode; }

uint32_t CPortalShims_streamCount(const CPortalShims_Session *session) {
    GVariant *streams = xdp_session_get_streams(session->session);
    return streams == NULL ? 0 : (uint32_t)g_variant_n_children(streams);
}

uint32_t CPortalShims_streamNode(const CPortalShims_Session *session, uint32_t index) {
    GVariant *streams = xdp_session_get_streams(session->session);
    if (streams == NULL || index >= g_variant_n_children(streams)) return UINT32_MAX;
    uint32_t node = 0;
    g_variant_get_child(streams, index, "(u@a{sv})", &node, NULL);
    return node;
}

uint32_t CPortalShims_streamSourceType(const CPortalShims_Session *session, uint32_t index) {
    GVariant *streams = xdp_session_get_streams(session->session);
    if (streams == NULL || index >= g_variant_n_children(streams)) return 0;
    GVariant *properties = NULL;
    uint32_t node = 0, sourceType = 0;
    g_variant_get_child(streams, index, "(u@a{sv})", &node, &properties);
    if (properties != NULL) {
        if (!g_variant_lookup(properties, "source_type", "u", &sourceType)) sourceType = 0;
        g_variant_unref(properties);
    }
    return sourceType;
}

char *CPortalShims_restoreToken(const CPortalShims_Session *session) {
    char *token = xdp_session_get_restore_token(session->session);
    if (token == NULL) return NULL;
    char *copy = strdup(token);
    g_free(token);
    return copy;
}

int CPortalShims_openPipeWireRemote(CPortalShims_Session *session, char **message) {
    g_main_context_push_thread_default(session->context);
    int descriptor = xdp_session_open_pipewire_remote(session->session);
    g_main_context_pop_thread_default(session->context);
    if (descriptor < 0) *message = strdup("the portal gave no PipeWire connection (OpenPipeWireRemote failed)");
    return descriptor;
}

void CPortalShims_close(CPortalShims_Session *session) {
    if (session == NULL) return;
    g_main_context_push_thread_default(session->context);
    xdp_session_close(session->session);
    // Let the Close call go out before the context goes.
    while (g_main_context_iteration(session->context, FALSE)) {}
    g_object_unref(session->session);
    g_object_unref(session->portal);
    g_main_context_pop_thread_default(session->context);
    g_main_context_unref(session->context);
    free(session);
}
