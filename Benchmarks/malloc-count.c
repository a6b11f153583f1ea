// LD_PRELOAD library for the allocation benchmark: counts heap allocations made on threads whose name starts
// with $MALLOC_COUNT_THREAD, by the library that called the allocator, and prints the counts at exit.
// Not linked into screenpub.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static atomic_long counted;
enum { maxLibraries = 32 };
static const char *libraryNames[maxLibraries];
static atomic_long libraryCounts[maxLibraries];
static _Thread_local int matching = -1;
static _Thread_local int inside;
static char bootstrap[4096];
static size_t bootstrapUsed;

static void count(void) {
    if (inside) return;
    inside = 1;
    if (matching != 1) {
        const char *prefix = getenv("MALLOC_COUNT_THREAD");
        char name[17] = {0};
        prctl(PR_GET_NAME, name, 0, 0, 0);
        matching = prefix && strncmp(name, prefix, strlen(prefix)) == 0;
    }
    if (matching == 1) {
        atomic_fetch_add(&counted, 1);
        // The caller of the allocator: frame 0 is count(), 1 the interposed function, 2 its caller.
        void *frames[3];
        const char *library = "?";
        Dl_info info;
        if (backtrace(frames, 3) == 3 && dladdr(frames[2], &info) && info.dli_fname) {
            library = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
        }
        for (int i = 0; i < maxLibraries; i++) {
            if (libraryNames[i] == NULL) libraryNames[i] = library;
            if (libraryNames[i] == library || strcmp(libraryNames[i], library) == 0) {
                atomic_fetch_add(&libraryCounts[i], 1);
                break;
            }
        }
    }
    inside = 0;
}

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "malloc-count: %ld allocations on threads named %s*\n", atomic_load(&counted),
            getenv("MALLOC_COUNT_THREAD") ? getenv("MALLOC_COUNT_THREAD") : "");
    for (int i = 0; i < maxLibraries && libraryNames[i]; i++) {
        fprintf(stderr, "malloc-count-by: %s %ld\n", libraryNames[i], atomic_load(&libraryCounts[i]));
    }
}

static void resolve(void) {
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
}

void *malloc(size_t size) {
    if (!real_malloc) resolve();
    count();
    return real_malloc(size);
}

void *calloc(size_t n, size_t size) {
    if (!real_calloc) {
        // dlsym itself may call calloc: serve it from a static buffer.
        if (bootstrapUsed + n * size <= sizeof bootstrap) {
            void *p = bootstrap + bootstrapUsed;
            bootstrapUsed += (n * size + 15) & ~(size_t)15;
            return p;
        }
        resolve();
    }
    count();
    return real_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    if (!real_realloc) resolve();
    count();
    return real_realloc(p, size);
}

int posix_memalign(void **p, size_t alignment, size_t size) {
    if (!real_posix_memalign) resolve();
    count();
    return real_posix_memalign(p, alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!real_aligned_alloc) resolve();
    count();
    return real_aligned_alloc(alignment, size);
}

void free(void *p) {
    static void (*real_free)(void *);
    if ((char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap) return;
    if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
    real_free(p);
}
