// Test fixture: a pointer for a headless wlroots compositor, which has no input device of its own, through
// wlr-virtual-pointer (the protocol remote-desktop tools use). Usage: wayland-virtual-pointer WIDTH HEIGHT, on
// $WAYLAND_DISPLAY; reads "move X Y" lines from standard input and answers "ok" once the compositor has the
// motion. The pointer exists while this program runs. Requests are written with their opcodes, as
// wayland-scanner's client header writes them.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>

extern const struct wl_interface zwlr_virtual_pointer_manager_v1_interface;
extern const struct wl_interface zwlr_virtual_pointer_v1_interface;

enum { create_virtual_pointer = 0, motion_absolute = 1, frame = 4 };

static struct wl_proxy *manager;

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    if (strcmp(interface, zwlr_virtual_pointer_manager_v1_interface.name) == 0)
        manager = wl_registry_bind(registry, name, &zwlr_virtual_pointer_manager_v1_interface, 1);
}

static void global_remove(void *data, struct wl_registry *registry, uint32_t name) {}

static const struct wl_registry_listener registry_listener = {global, global_remove};

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: wayland-virtual-pointer WIDTH HEIGHT\n");
        return 2;
    }
    uint32_t width = (uint32_t)atoi(argv[1]), height = (uint32_t)atoi(argv[2]);
    struct wl_display *display = wl_display_connect(NULL);
    if (!display) {
        fprintf(stderr, "no Wayland compositor\n");
        return 1;
    }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!manager) {
        fprintf(stderr, "the compositor offers no wlr-virtual-pointer\n");
        return 1;
    }
    struct wl_proxy *pointer = wl_proxy_marshal_flags(
        manager, create_virtual_pointer, &zwlr_virtual_pointer_v1_interface, 1, 0, NULL, NULL);
    wl_display_roundtrip(display);
    printf("ready\n");
    fflush(stdout);
    char line[128];
    while (fgets(line, sizeof line, stdin)) {
        unsigned x, y;
        if (sscanf(line, "move %u %u", &x, &y) != 2) continue;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint32_t milliseconds = (uint32_t)(now.tv_sec * 1000 + now.tv_nsec / 1000000);
        wl_proxy_marshal_flags(pointer, motion_absolute, NULL, 1, 0, milliseconds, x, y, width, height);
        wl_proxy_marshal_flags(pointer, frame, NULL, 1, 0);
        if (wl_display_roundtrip(display) < 0) return 1;
        printf("ok\n");
        fflush(stdout);
    }
    return 0;
}
