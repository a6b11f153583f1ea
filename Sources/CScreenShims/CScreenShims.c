#include "CScreenShims.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <X11/Xutil.h>
#include <libavutil/error.h>

// MARK: X11 errors

static _Thread_local int lastXError = 0;

// Lost connections are tracked per Display so one vanished server does not poison another connection.
enum { maxTrackedDisplays = 64 };
static Display *lostDisplays[maxTrackedDisplays];
static pthread_mutex_t lostLock = PTHREAD_MUTEX_INITIALIZER;

static int recordXError(Display *display, XErrorEvent *event) {
    (void)display;
    lastXError = event->error_code;
    return 0;
}

static int recordIOError(Display *display) {
    pthread_mutex_lock(&lostLock);
    for (int i = 0; i < maxTrackedDisplays; i++) {
        if (lostDisplays[i] == display) break;
        if (lostDisplays[i] == NULL) { lostDisplays[i] = display; break; }
    }
    pthread_mutex_unlock(&lostLock);
    return 0;
}

// Returning from the exit handler (libX11 >= 1.7) keeps the process alive; Xlib calls on the dead
// display then fail instead of exiting, and the capture loop sees CScreenShims_xConnectionLost.
static void ioErrorExit(Display *display, void *userData) {
    (void)userData;
    recordIOError(display);
}

static int ioErrorHandler(Display *display) {
    recordIOError(display);
    return 0;
}

static pthread_once_t handlersOnce = PTHREAD_ONCE_INIT;
static void installHandlersOnce(void) {
    XInitThreads();
    XSetErrorHandler(recordXError);
    XSetIOErrorHandler(ioErrorHandler);
}

void CScreenShims_installXErrorHandlers(void) { pthread_once(&handlersOnce, installHandlersOnce); }

void CScreenShims_watchDisplay(Display *display) { XSetIOErrorExitHandler(display, ioErrorExit, NULL); }

int CScreenShims_takeXError(void) {
    int code = lastXError;
    lastXError = 0;
    return code;
}

bool CScreenShims_xConnectionLost(Display *display) {
    bool lost = false;
    pthread_mutex_lock(&lostLock);
    for (int i = 0; i < maxTrackedDisplays && lostDisplays[i] != NULL; i++) {
        if (lostDisplays[i] == display) { lost = true; break; }
    }
    pthread_mutex_unlock(&lostLock);
    return lost;
}

void CScreenShims_forgetDisplay(Display *display) {
    pthread_mutex_lock(&lostLock);
    int count = 0;
    while (count < maxTrackedDisplays && lostDisplays[count] != NULL) count++;
    for (int i = 0; i < count; i++) {
        if (lostDisplays[i] == display) {
            lostDisplays[i] = lostDisplays[count - 1];
            lostDisplays[count - 1] = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&lostLock);
}

// MARK: XShm

struct CScreenShims_ShmImage {
    XImage *image;
    XShmSegmentInfo segment; // must stay at a fixed heap address while attached
    bool attached;
};

CScreenShims_ShmImage *CScreenShims_shmImageCreate(Display *display, Visual *visual, int depth,
                                                   int width, int height, int *xError) {
    *xError = 0;
    CScreenShims_ShmImage *shm = calloc(1, sizeof(CScreenShims_ShmImage));
    if (shm == NULL) return NULL;
    shm->segment.shmid = -1;
    shm->image = XShmCreateImage(display, visual, (unsigned)depth, ZPixmap, NULL, &shm->segment,
                                 (unsigned)width, (unsigned)height);
    if (shm->image == NULL) goto fail;
    shm->segment.shmid = shmget(IPC_PRIVATE, (size_t)shm->image->bytes_per_line * (size_t)shm->image->height,
                                IPC_CREAT | 0600);
    if (shm->segment.shmid < 0) goto fail;
    shm->segment.shmaddr = shm->image->data = shmat(shm->segment.shmid, NULL, 0);
    if (shm->segment.shmaddr == (char *)-1) { shm->segment.shmaddr = NULL; shm->image->data = NULL; goto fail; }
    shm->segment.readOnly = False;
    CScreenShims_takeXError();
    if (!XShmAttach(display, &shm->segment)) goto fail;
    XSync(display, False); // surfaces BadAccess (remote or sandboxed clients) now, not later
    *xError = CScreenShims_takeXError();
    if (*xError != 0) goto fail;
    shm->attached = true;
    // Marked for removal now: the kernel frees the segment when the last attachment goes, even on a crash.
    shmctl(shm->segment.shmid, IPC_RMID, NULL);
    return shm;
fail:
    CScreenShims_shmImageDestroy(display, shm);
    return NULL;
}

void CScreenShims_shmImageDestroy(Display *display, CScreenShims_ShmImage *shm) {
    if (shm == NULL) return;
    if (shm->attached && !CScreenShims_xConnectionLost(display)) {
        XShmDetach(display, &shm->segment);
        XSync(display, False);
        CScreenShims_takeXError();
    }
    if (shm->segment.shmaddr != NULL) shmdt(shm->segment.shmaddr);
    if (shm->segment.shmid >= 0) shmctl(shm->segment.shmid, IPC_RMID, NULL);
    if (shm->image != NULL) {
        shm->image->data = NULL; // shared memory is not malloc'd: XDestroyImage must not free it
        XDestroyImage(shm->image);
    }
    free(shm);
}

bool CScreenShims_shmImageGet(Display *display, Drawable drawable, CScreenShims_ShmImage *shm, int x, int y) {
    CScreenShims_takeXError();
    Status ok = XShmGetImage(display, drawable, shm->image, x, y, AllPlanes);
    return ok && CScreenShims_takeXError() == 0;
}

XImage *CScreenShims_shmImageXImage(CScreenShims_ShmImage *shm) { return shm->image; }

void CScreenShims_destroyImage(XImage *image) { XDestroyImage(image); }

// MARK: libvpx

vpx_codec_err_t CScreenShims_vpxEncoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                            const vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_init(ctx, iface, cfg, 0);
}

vpx_codec_err_t CScreenShims_vpxDecoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, unsigned int threads) {
    vpx_codec_dec_cfg_t cfg = {.threads = threads, .w = 0, .h = 0};
    return vpx_codec_dec_init(ctx, iface, &cfg, 0);
}

vpx_codec_err_t CScreenShims_vpxControlInt(vpx_codec_ctx_t *ctx, int control, int value) {
    return vpx_codec_control_(ctx, control, value);
}

vpx_codec_err_t CScreenShims_vpxControlActiveMap(vpx_codec_ctx_t *ctx, vpx_active_map_t *map) {
    return vpx_codec_control_(ctx, VP8E_SET_ACTIVEMAP, map);
}

// MARK: threads

void CScreenShims_setThreadName(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

// MARK: libavformat

int CScreenShims_averrorEAGAIN(void) { return AVERROR(EAGAIN); }
int CScreenShims_averrorEOF(void) { return AVERROR_EOF; }
