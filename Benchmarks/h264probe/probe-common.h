// Shared by the two H.264 library probes (Benchmarks/h264.sh): read I420 frames, time the library's encode
// calls alone (CPU seconds of this process), report bytes and peak RSS.
#ifndef PROBE_COMMON_H
#define PROBE_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/resource.h>

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void report(const char *library, int frames, double seconds, long bytes, int skipped) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("library=%s frames=%d cpu=%.2f bytes=%ld skipped=%d rss_kb=%ld\n", library, frames, seconds, bytes, skipped, usage.ru_maxrss);
}
#endif
