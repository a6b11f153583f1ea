#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/type-info.h>
#include <spa/buffer/meta.h>
#include <spa/utils/result.h>
#include <spa/param/audio/format-utils.h>
