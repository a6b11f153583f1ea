// A repaint asked of a Wayland compositor that sends screen-cast frames only when something on the screen changes
// (wlroots' screencopy with damage, as xdg-desktop-portal-wlr uses it): a static screen would give no first
// picture. wlr-layer-shell's requests are written here with their opcodes, as wayland-scanner's client header
// writes them; the interface tables are wayland-scanner's own output (`wayland-scanner private-code`, 1.21):
// wlr-layer-shell-unstable-v1-protocol.c from wlr-protocols' unstable/wlr-layer-shell-unstable-v1.xml, and
// xdg-shell-protocol.c from wayland-protocols' stable/xdg-shell/xdg-shell.xml (layer-shell's get_popup names
// xdg_popup).
#define _GNU_SOURCE
#include "CWaylandShims.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

extern const struct wl_interface zwlr_layer_shell_v1_interface;
extern const struct wl_interface zwlr_layer_surface_v1_interface;

enum {
    layer_shell_get_layer_surface = 0,
    layer_surface_set_size = 0,
    layer_surface_set_anchor = 1,
    layer_surface_set_exclusive_zone = 2,
    layer_surface_ack_configure = 6,
    layer_surface_destroy = 7,
    layer_overlay = 3,
    anchor_top_left = 1 | 4,
};

struct repaint {
    struct wl_compositor *compositor;
    struct wl_shm *shm;
    struct wl_proxy *layer_shell;
    int configured;
    int synced;
};

static void set_message(char **message, const char *format, ...) {
    if (!message) return;
    va_list arguments;
    va_start(arguments, format);
    if (vasprintf(message, format, arguments) < 0) *message = NULL;
    va_end(arguments);
}

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    struct repaint *repaint = data;
    if (strcmp(interface, wl_compositor_interface.name) == 0 && version >= 1) {
        repaint->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 1);
    } else if (strcmp(interface, wl_shm_interface.name) == 0) {
        repaint->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
    } else if (strcmp(interface, zwlr_layer_shell_v1_interface.name) == 0) {
        repaint->layer_shell = wl_registry_bind(registry, name, &zwlr_layer_shell_v1_interface, 1);
    }
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {}

static const struct wl_registry_listener registry_listener = {global, global_remove};

static void configure(void *data, struct wl_proxy *surface, uint32_t serial, uint32_t width, uint32_t height) {
    wl_proxy_marshal_flags(surface, layer_surface_ack_configure, NULL, wl_proxy_get_version(surface), 0, serial);
    ((struct repaint *)data)->configured = 1;
}

static void closed(void *data, struct wl_proxy *surface) {}

static void (*const layer_surface_listener[])(void) = {(void (*)(void))configure, (void (*)(void))closed};

static void sync_done(void *data, struct wl_callback *callback, uint32_t time) { ((struct repaint *)data)->synced = 1; }

static const struct wl_callback_listener sync_listener = {sync_done};

static int64_t now_milliseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Dispatches events until `*flag` is set or the deadline passes: 1 when set, 0 on timeout, -1 on error.
static int dispatch_until(struct wl_display *display, int *flag, int64_t deadline) {
    while (!*flag) {
        while (wl_display_prepare_read(display) != 0) {
            if (wl_display_dispatch_pending(display) < 0) return -1;
            if (*flag) return 1;
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) {
            wl_display_cancel_read(display);
            return -1;
        }
        int64_t remaining = deadline - now_milliseconds();
        if (remaining <= 0) {
            wl_display_cancel_read(display);
            return 0;
        }
        struct pollfd readable = {.fd = wl_display_get_fd(display), .events = POLLIN};
        int ready = poll(&readable, 1, (int)remaining);
        if (ready <= 0) {
            wl_display_cancel_read(display);
            if (ready < 0 && errno != EINTR) return -1;
            continue;
        }
        if (wl_display_read_events(display) < 0 || wl_display_dispatch_pending(display) < 0) return -1;
    }
    return 1;
}

/// Waits until the compositor has handled every request sent so far.
static int round_trip(struct wl_display *display, struct repaint *repaint, int64_t deadline) {
    repaint->synced = 0;
    struct wl_callback *callback = wl_display_sync(display);
    wl_callback_add_listener(callback, &sync_listener, repaint);
    int done = dispatch_until(display, &repaint->synced, deadline);
    wl_callback_destroy(callback);
    return done;
}

static struct wl_buffer *transparent_pixel(struct wl_shm *shm) {
    int descriptor = memfd_create("screenpub-repaint", MFD_CLOEXEC);
    if (descriptor < 0) return NULL;
    struct wl_buffer *buffer = NULL;
    if (ftruncate(descriptor, 4) == 0) {  // one ARGB pixel, all zero: fully transparent
        struct wl_shm_pool *pool = wl_shm_create_pool(shm, descriptor, 4);
        buffer = wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_ARGB8888);
        wl_shm_pool_destroy(pool);
    }
    close(descriptor);
    return buffer;
}

CWaylandShims_RepaintOutcome CWaylandShims_requestRepaint(const char *displayName, int timeoutMilliseconds, char **message) {
    if (message) *message = NULL;
    struct wl_display *display = wl_display_connect(displayName);
    if (!display) {
        set_message(message, "no Wayland compositor answers at %s", displayName ? displayName : (getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY") : "wayland-0"));
        return CWaylandShims_NoCompositor;
    }
    int64_t deadline = now_milliseconds() + timeoutMilliseconds;
    struct repaint repaint = {0};
    CWaylandShims_RepaintOutcome outcome = CWaylandShims_Failed;
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, &repaint);
    struct wl_surface *surface = NULL;
    struct wl_proxy *layer_surface = NULL;
    struct wl_buffer *buffer = NULL;
    if (round_trip(display, &repaint, deadline) != 1) {
        set_message(message, "the Wayland compositor did not list its globals in time");
        goto done;
    }
    if (!repaint.compositor || !repaint.shm || !repaint.layer_shell) {
        set_message(message, "the Wayland compositor offers no wlr-layer-shell");
        outcome = CWaylandShims_NoLayerShell;
        goto done;
    }
    surface = wl_compositor_create_surface(repaint.compositor);
    struct wl_region *nothing = wl_compositor_create_region(repaint.compositor);
    wl_surface_set_input_region(surface, nothing);  // clicks go through
    wl_region_destroy(nothing);
    layer_surface = wl_proxy_marshal_flags(
        repaint.layer_shell, layer_shell_get_layer_surface, &zwlr_layer_surface_v1_interface, wl_proxy_get_version(repaint.layer_shell), 0,
        NULL, surface, NULL, (uint32_t)layer_overlay, "screenpub-repaint");
    wl_proxy_add_listener(layer_surface, (void (**)(void))layer_surface_listener, &repaint);
    wl_proxy_marshal_flags(layer_surface, layer_surface_set_size, NULL, 1, 0, 1u, 1u);
    wl_proxy_marshal_flags(layer_surface, layer_surface_set_anchor, NULL, 1, 0, (uint32_t)anchor_top_left);
    wl_proxy_marshal_flags(layer_surface, layer_surface_set_exclusive_zone, NULL, 1, 0, (int32_t)-1);
    wl_surface_commit(surface);
    if (dispatch_until(display, &repaint.configured, deadline) != 1) {
        set_message(message, "the Wayland compositor did not place the repaint overlay in time");
        goto done;
    }
    buffer = transparent_pixel(repaint.shm);
    if (!buffer) {
        set_message(message, "no shared memory for the repaint overlay: %s", strerror(errno));
        goto done;
    }
    wl_surface_attach(surface, buffer, 0, 0);
    wl_surface_damage(surface, 0, 0, 1, 1);
    wl_surface_commit(surface);
    if (round_trip(display, &repaint, deadline) != 1) {
        set_message(message, "the Wayland compositor did not show the repaint overlay in time");
        goto done;
    }
    // Shown for about a frame, so that the repaint happens with it; removing it repaints again.
    usleep(50 * 1000);
    outcome = CWaylandShims_Repainted;
done:
    if (layer_surface) wl_proxy_marshal_flags(layer_surface, layer_surface_destroy, NULL, 1, WL_MARSHAL_FLAG_DESTROY);
    if (surface) wl_surface_destroy(surface);
    if (buffer) wl_buffer_destroy(buffer);
    if (repaint.layer_shell) wl_proxy_destroy(repaint.layer_shell);
    if (repaint.shm) wl_shm_destroy(repaint.shm);
    if (repaint.compositor) wl_compositor_destroy(repaint.compositor);
    wl_registry_destroy(registry);
    // Disconnecting removes whatever is left of ours; no waiting on a compositor that may not answer.
    wl_display_flush(display);
    wl_display_disconnect(display);
    return outcome;
}
