// Test fixture, loaded into xdg-desktop-portal-wlr alone with LD_PRELOAD: makes a compositor without a GPU usable
// for screen casts, as a real desktop's is. xdpw 0.7 starts no cast unless the compositor's screencopy frames
// offer a DMA-BUF format besides shared memory (upstream issue 289), and wlroots' pixman renderer, the only one
// without a GPU, offers none. This adds the offer, with the shared-memory buffer's format and size, to every
// frame's events; with no GPU device xdpw still negotiates shared-memory PipeWire buffers, which is what is tested.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

struct wl_proxy;
extern const char *wl_proxy_get_class(struct wl_proxy *proxy);
extern uint32_t wl_proxy_get_version(struct wl_proxy *proxy);

typedef void (*event_handler)(void);
typedef void (*buffer_event)(void *, struct wl_proxy *, uint32_t, uint32_t, uint32_t, uint32_t);
typedef void (*linux_dmabuf_event)(void *, struct wl_proxy *, uint32_t, uint32_t, uint32_t);

// zwlr_screencopy_frame_v1's events in protocol order: buffer, flags, ready, failed, damage, linux_dmabuf,
// buffer_done. xdpw has one listener for every frame.
static const event_handler *original;
static event_handler replacement[7];

static void buffer_then_dmabuf_offer(void *data, struct wl_proxy *frame, uint32_t format, uint32_t width, uint32_t height, uint32_t stride) {
    ((buffer_event)original[0])(data, frame, format, width, height, stride);
    // wl_shm's two formats numbered apart from their DRM fourcc: ARGB8888 (0) and XRGB8888 (1).
    uint32_t fourcc = format == 0 ? 0x34325241u : format == 1 ? 0x34325258u : format;
    ((linux_dmabuf_event)original[5])(data, frame, fourcc, width, height);
}

int wl_proxy_add_listener(struct wl_proxy *proxy, void (**implementation)(void), void *data) {
    static int (*next)(struct wl_proxy *, void (**)(void), void *);
    if (!next) next = (int (*)(struct wl_proxy *, void (**)(void), void *))dlsym(RTLD_NEXT, "wl_proxy_add_listener");
    if (strcmp(wl_proxy_get_class(proxy), "zwlr_screencopy_frame_v1") == 0 && wl_proxy_get_version(proxy) >= 3) {
        original = (const event_handler *)implementation;
        memcpy(replacement, implementation, sizeof replacement);
        replacement[0] = (event_handler)buffer_then_dmabuf_offer;
        implementation = replacement;
    }
    return next(proxy, implementation, data);
}
