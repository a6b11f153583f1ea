#include "CX11Shims.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <X11/Xutil.h>

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
// display then fail instead of exiting, and the capture loop sees CX11Shims_xConnectionLost.
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

void CX11Shims_installXErrorHandlers(void) { pthread_once(&handlersOnce, installHandlersOnce); }

void CX11Shims_watchDisplay(Display *display) { XSetIOErrorExitHandler(display, ioErrorExit, NULL); }

int CX11Shims_takeXError(void) {
    int code = lastXError;
    lastXError = 0;
    return code;
}

bool CX11Shims_xConnectionLost(Display *display) {
    bool lost = false;
    pthread_mutex_lock(&lostLock);
    for (int i = 0; i < maxTrackedDisplays && lostDisplays[i] != NULL; i++) {
        if (lostDisplays[i] == display) { lost = true; break; }
    }
    pthread_mutex_unlock(&lostLock);
    return lost;
}

void CX11Shims_forgetDisplay(Display *display) {
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

struct CX11Shims_ShmImage {
    XImage *image;
    XShmSegmentInfo segment; // must stay at a fixed heap address while attached
    bool attached;
};

CX11Shims_ShmImage *CX11Shims_shmImageCreate(Display *display, Visual *visual, int depth,
                                                   int width, int height, int *xError) {
    *xError = 0;
    CX11Shims_ShmImage *shm = calloc(1, sizeof(CX11Shims_ShmImage));
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
    CX11Shims_takeXError();
    if (!XShmAttach(display, &shm->segment)) goto fail;
    XSync(display, False); // surfaces BadAccess (remote or sandboxed clients) now, not later
    *xError = CX11Shims_takeXError();
    if (*xError != 0) goto fail;
    shm->attached = true;
    // Marked for removal now: the kernel frees the segment when the last attachment goes, even on a crash.
    shmctl(shm->segment.shmid, IPC_RMID, NULL);
    return shm;
fail:
    CX11Shims_shmImageDestroy(display, shm);
    return NULL;
}

void CX11Shims_shmImageDestroy(Display *display, CX11Shims_ShmImage *shm) {
    if (shm == NULL) return;
    if (shm->attached && !CX11Shims_xConnectionLost(display)) {
        XShmDetach(display, &shm->segment);
        XSync(display, False);
        CX11Shims_takeXError();
    }
    if (shm->segment.shmaddr != NULL) shmdt(shm->segment.shmaddr);
    if (shm->segment.shmid >= 0) shmctl(shm->segment.shmid, IPC_RMID, NULL);
    if (shm->image != NULL) {
        shm->image->data = NULL; // shared memory is not malloc'd: XDestroyImage must not free it
        XDestroyImage(shm->image);
    }
    free(shm);
}

bool CX11Shims_shmImageGet(Display *display, Drawable drawable, CX11Shims_ShmImage *shm, int x, int y) {
    CX11Shims_takeXError();
    Status ok = XShmGetImage(display, drawable, shm->image, x, y, AllPlanes);
    return ok && CX11Shims_takeXError() == 0;
}

XImage *CX11Shims_shmImageXImage(CX11Shims_ShmImage *shm) { return shm->image; }

void CX11Shims_destroyImage(XImage *image) { XDestroyImage(image); }
