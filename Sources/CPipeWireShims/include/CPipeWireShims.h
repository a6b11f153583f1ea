#ifndef CPIPEWIRESHIMS_H
#define CPIPEWIRESHIMS_H

// What Swift cannot call directly in libpipewire: its loop macros and the variadic SPA pod builders.

#include <stdbool.h>
#include <stdint.h>
#include <pipewire/pipewire.h>

/// The EnumFormat a screen consumer offers: raw video in BGRx, BGRA, RGBx or RGBA, any size up to 16384²,
/// any frame rate. Built into `buffer`; returns NULL when it does not fit.
const struct spa_pod *CPipeWireShims_consumerFormats(uint8_t *buffer, uint32_t size);

/// One fixed raw video format (a producer's offer).
const struct spa_pod *CPipeWireShims_fixedFormat(uint8_t *buffer, uint32_t size, uint32_t format, uint32_t width,
                                                 uint32_t height, uint32_t framesPerSecond);

/// The Buffers param for a negotiated size: 2–16 buffers of stride × height bytes, in memory we can map.
const struct spa_pod *CPipeWireShims_buffers(uint8_t *buffer, uint32_t size, uint32_t stride, uint32_t height);

/// A Meta param asking for SPA_META_Header (`damageRects` 0) or SPA_META_VideoDamage with room for
/// `damageRects` rectangles.
const struct spa_pod *CPipeWireShims_meta(uint8_t *buffer, uint32_t size, uint32_t type, uint32_t damageRects);

/// A Meta param asking for SPA_META_Cursor with room for a bitmap of up to largestSide² pixels.
const struct spa_pod *CPipeWireShims_cursorMeta(uint8_t *buffer, uint32_t size, uint32_t largestSide);
// Cursor metadata of exactly one size (room for a side×side bitmap), as mutter offers it.
const struct spa_pod *CPipeWireShims_fixedCursorMeta(uint8_t *buffer, uint32_t size, uint32_t side);

/// A buffer's cursor metadata: position and hotspot, and the bitmap when this buffer carries one (it is
/// sent only when the shape changes). `pixels` points into the buffer's metadata.
struct CPipeWireShims_Cursor {
    int32_t x, y, hotX, hotY;
    uint32_t format, width, height;
    int32_t stride;
    const uint8_t *pixels;
};
/// -1: no cursor metadata; 0: the cursor is not shown; 1: position only; 2: position and a new bitmap.
int CPipeWireShims_cursor(struct spa_buffer *buffer, struct CPipeWireShims_Cursor *cursor);

/// For a producer: writes cursor metadata (id 0 hides it), with a side² opaque RGBA bitmap when side > 0.
/// False when the buffer has no room for cursor metadata.
bool CPipeWireShims_setCursor(struct spa_buffer *buffer, uint32_t id, int32_t x, int32_t y, uint32_t side,
                              uint8_t red, uint8_t green, uint8_t blue);

/// The EnumFormat an audio consumer (or, with `channels` fixed, a producer) offers: 32-bit float samples,
/// interleaved, at `rate`, with `channels` channels, or the node's own channel count when `channels` is 0 (a
/// mono source stays mono). Front-left/front-right positions for two channels.
const struct spa_pod *CPipeWireShims_audioFormat(uint8_t *buffer, uint32_t size, uint32_t rate, uint32_t channels);

/// Reads a negotiated raw audio format. Returns 0, or a negative errno.
int CPipeWireShims_parseAudioFormat(const struct spa_pod *param, uint32_t *format, uint32_t *rate, uint32_t *channels);

/// The stream's timing now: the graph cycle's start (CLOCK_MONOTONIC ns, 0 when unknown), the delay between the
/// device and the stream in nanoseconds, and the samples its resampler holds (their time is not yet in any
/// buffer). False when PipeWire has none yet.
bool CPipeWireShims_streamTime(struct pw_stream *stream, int64_t *now, int64_t *delayNanoseconds, int64_t *bufferedSamples);

/// Reads a negotiated raw video format. Returns 0, or a negative errno.
int CPipeWireShims_parseVideoFormat(const struct spa_pod *param, uint32_t *format, uint32_t *width, uint32_t *height);

/// The buffer's header metadata: presentation time in nanoseconds (or -1) and flags (SPA_META_HEADER_FLAG_*).
bool CPipeWireShims_header(struct spa_buffer *buffer, int64_t *pts, uint32_t *flags);

/// Copies the buffer's damage rectangles as x, y, width, height quadruples into `rects` (room for `capacity`
/// rectangles). Returns how many there are (possibly more than `capacity`), or -1 without damage metadata.
int32_t CPipeWireShims_damage(struct spa_buffer *buffer, int32_t *rects, int32_t capacity);

/// Writes a header (pts, sequence) into a producer's buffer, if it has one.
void CPipeWireShims_setHeader(struct spa_buffer *buffer, int64_t pts, uint64_t sequence);

/// Follows one node in the registry, so a consumer learns that its node does not exist or went away
/// whatever the session manager does with the stream. Lives on the core's loop thread.
struct CPipeWireShims_NodeWatch;
enum CPipeWireShims_NodeState {
    CPipeWireShims_NodeUnknown = 0,  // the registry has not finished listing the globals yet
    CPipeWireShims_NodePresent = 1,
    CPipeWireShims_NodeAbsent = 2,   // the registry's full list did not have it
    CPipeWireShims_NodeRemoved = 3,  // it was there and has gone
};
struct CPipeWireShims_NodeWatch *CPipeWireShims_watchNode(struct pw_core *core, uint32_t nodeID);
enum CPipeWireShims_NodeState CPipeWireShims_nodeState(const struct CPipeWireShims_NodeWatch *watch);
/// The last error the core reported (a negative errno, e.g. -EPIPE when the daemon went away), or 0.
int CPipeWireShims_coreError(const struct CPipeWireShims_NodeWatch *watch);
void CPipeWireShims_unwatchNode(struct CPipeWireShims_NodeWatch *watch);

/// Every node the registry lists, with the properties that find one by name and say what it is. Lives on the
/// core's loop thread; complete once ``CPipeWireShims_nodeListComplete`` says so.
struct CPipeWireShims_NodeList;
struct CPipeWireShims_NodeListEntry {
    uint32_t id;
    uint64_t serial;        // object.serial (what a stream's target.object names by number), or UINT64_MAX
    const char *name;       // node.name, or NULL
    const char *mediaClass; // media.class ("Audio/Sink", "Audio/Source", "Stream/Output/Audio", …), or NULL
};
struct CPipeWireShims_NodeList *CPipeWireShims_listNodes(struct pw_core *core);
/// Whether the registry has sent every global that existed when the list was asked for.
bool CPipeWireShims_nodeListComplete(const struct CPipeWireShims_NodeList *list);
int CPipeWireShims_nodeListCount(const struct CPipeWireShims_NodeList *list);
/// The entry at `index` (its strings live as long as the list).
struct CPipeWireShims_NodeListEntry CPipeWireShims_nodeListEntry(const struct CPipeWireShims_NodeList *list, int index);
void CPipeWireShims_freeNodeList(struct CPipeWireShims_NodeList *list);

/// Adds a stream listener whose hook and events live on the heap (libpipewire keeps pointers to both; a
/// Swift `&property` is only valid during the call). `events` is copied. Remove with the function below.
struct spa_hook *CPipeWireShims_addStreamListener(struct pw_stream *stream, const struct pw_stream_events *events, void *data);
void CPipeWireShims_removeStreamListener(struct spa_hook *listener);

// pw_loop macros.
int CPipeWireShims_loopIterate(struct pw_loop *loop, int timeoutMilliseconds);
void CPipeWireShims_loopEnter(struct pw_loop *loop);
void CPipeWireShims_loopLeave(struct pw_loop *loop);
struct spa_source *CPipeWireShims_addTimer(struct pw_loop *loop, void (*callback)(void *data, uint64_t expirations),
                                           void *data);
/// Fires every `intervalNanoseconds`, first after one interval.
void CPipeWireShims_startTimer(struct pw_loop *loop, struct spa_source *timer, uint64_t intervalNanoseconds);
void CPipeWireShims_destroySource(struct pw_loop *loop, struct spa_source *source);

#endif
