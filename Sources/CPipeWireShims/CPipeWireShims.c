#include "CPipeWireShims.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/pod/builder.h>
#include <spa/buffer/meta.h>

const struct spa_pod *CPipeWireShims_consumerFormats(uint8_t *buffer, uint32_t size) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle smallest = SPA_RECTANGLE(1, 1), preferred = SPA_RECTANGLE(1920, 1080),
                         largest = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction none = SPA_FRACTION(0, 1), preferredRate = SPA_FRACTION(30, 1),
                        fastest = SPA_FRACTION(1000, 1);
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format,
        SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA,
                               SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&preferred, &smallest, &largest),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&none, &none, &fastest),
        SPA_FORMAT_VIDEO_maxFramerate, SPA_POD_CHOICE_RANGE_Fraction(&preferredRate, &none, &fastest));
}

const struct spa_pod *CPipeWireShims_fixedFormat(uint8_t *buffer, uint32_t size, uint32_t format, uint32_t width,
                                                 uint32_t height, uint32_t framesPerSecond) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle dimensions = SPA_RECTANGLE(width, height);
    struct spa_fraction rate = SPA_FRACTION(framesPerSecond, 1);
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(format),
        SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&dimensions),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&rate));
}

const struct spa_pod *CPipeWireShims_buffers(uint8_t *buffer, uint32_t size, uint32_t stride, uint32_t height) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 16),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int((int32_t)(stride * height)),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int((int32_t)stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemPtr) | (1 << SPA_DATA_MemFd)));
}

const struct spa_pod *CPipeWireShims_meta(uint8_t *buffer, uint32_t size, uint32_t type, uint32_t damageRects) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    if (type == SPA_META_VideoDamage) {
        return spa_pod_builder_add_object(
            &builder, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
            SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
            SPA_PARAM_META_size,
            SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * damageRects, sizeof(struct spa_meta_region) * 1,
                                     sizeof(struct spa_meta_region) * damageRects));
    }
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
}

static uint32_t cursorMetaSize(uint32_t width, uint32_t height) {
    return sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + width * height * 4;
}

const struct spa_pod *CPipeWireShims_cursorMeta(uint8_t *buffer, uint32_t size, uint32_t largestSide) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
        SPA_PARAM_META_size,
        SPA_POD_CHOICE_RANGE_Int(cursorMetaSize(64, 64), cursorMetaSize(1, 1), cursorMetaSize(largestSide, largestSide)));
}

const struct spa_pod *CPipeWireShims_fixedCursorMeta(uint8_t *buffer, uint32_t size, uint32_t side) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(
        &builder, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
        SPA_PARAM_META_size, SPA_POD_Int(cursorMetaSize(side, side)));
}

int CPipeWireShims_cursor(struct spa_buffer *buffer, struct CPipeWireShims_Cursor *cursor) {
    struct spa_meta *region = spa_buffer_find_meta(buffer, SPA_META_Cursor);
    if (region == NULL || region->size < sizeof(struct spa_meta_cursor)) return -1;
    struct spa_meta_cursor *meta = region->data;
    if (!spa_meta_cursor_is_valid(meta)) return 0;
    cursor->x = meta->position.x;
    cursor->y = meta->position.y;
    cursor->hotX = meta->hotspot.x;
    cursor->hotY = meta->hotspot.y;
    cursor->pixels = NULL;
    if (meta->bitmap_offset < sizeof *meta) return 1;
    // The bitmap and its pixels must lie inside the metadata region the buffer has.
    if ((uint64_t)meta->bitmap_offset + sizeof(struct spa_meta_bitmap) > region->size) return 1;
    struct spa_meta_bitmap *bitmap = SPA_PTROFF(meta, meta->bitmap_offset, struct spa_meta_bitmap);
    if (bitmap->size.width == 0 || bitmap->size.height == 0 || bitmap->offset < sizeof *bitmap) return 1;
    int32_t rowBytes = bitmap->stride > 0 ? bitmap->stride : (int32_t)bitmap->size.width * 4;
    if (rowBytes < (int32_t)bitmap->size.width * 4 ||
        (uint64_t)meta->bitmap_offset + bitmap->offset + (uint64_t)rowBytes * bitmap->size.height > region->size)
        return 1;
    cursor->format = bitmap->format;
    cursor->width = bitmap->size.width;
    cursor->height = bitmap->size.height;
    cursor->stride = rowBytes;
    cursor->pixels = SPA_PTROFF(bitmap, bitmap->offset, const uint8_t);
    return 2;
}

bool CPipeWireShims_setCursor(struct spa_buffer *buffer, uint32_t id, int32_t x, int32_t y, uint32_t side,
                              uint8_t red, uint8_t green, uint8_t blue) {
    struct spa_meta *region = spa_buffer_find_meta(buffer, SPA_META_Cursor);
    if (region == NULL || region->size < sizeof(struct spa_meta_cursor)) return false;
    struct spa_meta_cursor *meta = region->data;
    if (sizeof *meta + sizeof(struct spa_meta_bitmap) + side * side * 4 > region->size) side = 0;
    meta->id = id;
    meta->flags = 0;
    meta->position.x = x;
    meta->position.y = y;
    meta->hotspot.x = 0;
    meta->hotspot.y = 0;
    meta->bitmap_offset = 0;
    if (side == 0) return true;
    struct spa_meta_bitmap *bitmap = SPA_PTROFF(meta, sizeof *meta, struct spa_meta_bitmap);
    meta->bitmap_offset = sizeof *meta;
    bitmap->format = SPA_VIDEO_FORMAT_RGBA;
    bitmap->size.width = side;
    bitmap->size.height = side;
    bitmap->stride = (int32_t)side * 4;
    bitmap->offset = sizeof *bitmap;
    uint8_t *pixels = SPA_PTROFF(bitmap, bitmap->offset, uint8_t);
    for (uint32_t index = 0; index < side * side; index++) {
        pixels[index * 4] = red;
        pixels[index * 4 + 1] = green;
        pixels[index * 4 + 2] = blue;
        pixels[index * 4 + 3] = 255;
    }
    return true;
}

int CPipeWireShims_parseVideoFormat(const struct spa_pod *param, uint32_t *format, uint32_t *width, uint32_t *height) {
    uint32_t mediaType, mediaSubtype;
    if (param == NULL) return -EINVAL;
    if (spa_format_parse(param, &mediaType, &mediaSubtype) < 0) return -EINVAL;
    if (mediaType != SPA_MEDIA_TYPE_video || mediaSubtype != SPA_MEDIA_SUBTYPE_raw) return -ENOTSUP;
    struct spa_video_info_raw info;
    spa_zero(info);
    if (spa_format_video_raw_parse(param, &info) < 0) return -EINVAL;
    *format = info.format;
    *width = info.size.width;
    *height = info.size.height;
    return 0;
}

bool CPipeWireShims_header(struct spa_buffer *buffer, int64_t *pts, uint32_t *flags) {
    struct spa_meta_header *header = spa_buffer_find_meta_data(buffer, SPA_META_Header, sizeof(*header));
    if (header == NULL) return false;
    *pts = header->pts;
    *flags = header->flags;
    return true;
}

int32_t CPipeWireShims_damage(struct spa_buffer *buffer, int32_t *rects, int32_t capacity) {
    struct spa_meta *meta = spa_buffer_find_meta(buffer, SPA_META_VideoDamage);
    if (meta == NULL) return -1;
    int32_t count = 0;
    struct spa_meta_region *region;
    spa_meta_for_each(region, meta) {
        // A zero-sized region ends the list.
        if (!spa_meta_region_is_valid(region)) break;
        if (count < capacity) {
            rects[count * 4 + 0] = region->region.position.x;
            rects[count * 4 + 1] = region->region.position.y;
            rects[count * 4 + 2] = (int32_t)region->region.size.width;
            rects[count * 4 + 3] = (int32_t)region->region.size.height;
        }
        count++;
    }
    return count;
}

void CPipeWireShims_setHeader(struct spa_buffer *buffer, int64_t pts, uint64_t sequence) {
    struct spa_meta_header *header = spa_buffer_find_meta_data(buffer, SPA_META_Header, sizeof(*header));
    if (header == NULL) return;
    header->pts = pts;
    header->flags = 0;
    header->seq = sequence;
    header->dts_offset = 0;
}

int CPipeWireShims_loopIterate(struct pw_loop *loop, int timeoutMilliseconds) {
    return pw_loop_iterate(loop, timeoutMilliseconds);
}

void CPipeWireShims_loopEnter(struct pw_loop *loop) { pw_loop_enter(loop); }

void CPipeWireShims_loopLeave(struct pw_loop *loop) { pw_loop_leave(loop); }

struct spa_source *CPipeWireShims_addTimer(struct pw_loop *loop, void (*callback)(void *data, uint64_t expirations),
                                           void *data) {
    return pw_loop_add_timer(loop, callback, data);
}

void CPipeWireShims_startTimer(struct pw_loop *loop, struct spa_source *timer, uint64_t intervalNanoseconds) {
    struct timespec interval = {.tv_sec = (time_t)(intervalNanoseconds / 1000000000ull),
                                .tv_nsec = (long)(intervalNanoseconds % 1000000000ull)};
    pw_loop_update_timer(loop, timer, &interval, &interval, false);
}

void CPipeWireShims_destroySource(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

/// A stream listener's hook with the events it points to, in one heap block.
struct StreamListener {
    struct spa_hook hook;  // first: the block is freed through a pointer to it
    struct pw_stream_events events;
};

struct spa_hook *CPipeWireShims_addStreamListener(struct pw_stream *stream, const struct pw_stream_events *events, void *data) {
    struct StreamListener *listener = calloc(1, sizeof *listener);
    if (listener == NULL) return NULL;
    listener->events = *events;
    pw_stream_add_listener(stream, &listener->hook, &listener->events, data);
    return &listener->hook;
}

void CPipeWireShims_removeStreamListener(struct spa_hook *listener) {
    if (listener == NULL) return;
    spa_hook_remove(listener);
    free((struct StreamListener *)listener);
}

const struct spa_pod *CPipeWireShims_audioFormat(uint8_t *buffer, uint32_t size, uint32_t rate, uint32_t channels) {
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_pod_frame frame;
    spa_pod_builder_push_object(&builder, &frame, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&builder,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_audio),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_AUDIO_format, SPA_POD_Id(SPA_AUDIO_FORMAT_F32),
        SPA_FORMAT_AUDIO_rate, SPA_POD_Int((int32_t)rate), 0);
    if (channels == 0) {
        // No channel count: the adapter keeps the node's own (a mono source stays mono).
    } else {
        spa_pod_builder_add(&builder, SPA_FORMAT_AUDIO_channels, SPA_POD_Int((int32_t)channels), 0);
        if (channels == 2) {
            uint32_t positions[2] = {SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR};
            spa_pod_builder_add(&builder, SPA_FORMAT_AUDIO_position,
                                SPA_POD_Array(sizeof(uint32_t), SPA_TYPE_Id, 2, positions), 0);
        } else if (channels == 1) {
            uint32_t positions[1] = {SPA_AUDIO_CHANNEL_MONO};
            spa_pod_builder_add(&builder, SPA_FORMAT_AUDIO_position,
                                SPA_POD_Array(sizeof(uint32_t), SPA_TYPE_Id, 1, positions), 0);
        }
    }
    return spa_pod_builder_pop(&builder, &frame);
}

int CPipeWireShims_parseAudioFormat(const struct spa_pod *param, uint32_t *format, uint32_t *rate, uint32_t *channels) {
    uint32_t mediaType = 0, mediaSubtype = 0;
    int status = spa_format_parse(param, &mediaType, &mediaSubtype);
    if (status < 0) return status;
    if (mediaType != SPA_MEDIA_TYPE_audio || mediaSubtype != SPA_MEDIA_SUBTYPE_raw) return -EINVAL;
    struct spa_audio_info_raw info;
    spa_zero(info);
    status = spa_format_audio_raw_parse(param, &info);
    if (status < 0) return status;
    *format = info.format;
    *rate = info.rate;
    *channels = info.channels;
    return 0;
}

bool CPipeWireShims_streamTime(struct pw_stream *stream, int64_t *now, int64_t *delayNanoseconds, int64_t *bufferedSamples) {
    struct pw_time time;
    spa_zero(time);
    if (pw_stream_get_time_n(stream, &time, sizeof(time)) < 0 || time.rate.denom == 0) return false;
    *now = time.now;
    *delayNanoseconds = time.delay * (int64_t)SPA_NSEC_PER_SEC * time.rate.num / time.rate.denom;
    *bufferedSamples = (int64_t)time.buffered;
    return true;
}
