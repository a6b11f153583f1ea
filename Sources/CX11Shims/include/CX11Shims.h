// C helpers for the parts of Xlib and MIT-SHM that Swift cannot call directly: process-wide error
// handlers and the heap-allocated shared-memory segment.
// Every symbol is prefixed CX11Shims_.
#ifndef CX11SHIMS_H
#define CX11SHIMS_H

#include <stdint.h>
#include <stdbool.h>
#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>

// MARK: X11

/// Installs error handlers so that a protocol error or a lost server never calls exit().
/// Idempotent and thread-safe.
void CX11Shims_installXErrorHandlers(void);
/// Returns and clears the error code of the last X protocol error on this thread (0 = none).
int CX11Shims_takeXError(void);
/// Makes an I/O error on `display` (server gone) mark it lost instead of exiting the process.
void CX11Shims_watchDisplay(Display *display);
/// True once the connection to `display` failed with an I/O error; it must not be used again.
bool CX11Shims_xConnectionLost(Display *display);
/// Forgets a display's lost flag (call right before XCloseDisplay).
void CX11Shims_forgetDisplay(Display *display);

/// An XImage backed by a System V shared memory segment attached to the server.
typedef struct CX11Shims_ShmImage CX11Shims_ShmImage;
/// Creates and attaches a shared image; returns NULL (and sets *xError) when the server refuses (e.g. BadAccess
/// for a remote client) so the caller can fall back to XGetImage.
CX11Shims_ShmImage *CX11Shims_shmImageCreate(Display *display, Visual *visual, int depth,
                                                   int width, int height, int *xError);
void CX11Shims_shmImageDestroy(Display *display, CX11Shims_ShmImage *image);
/// Fills the image from `drawable` at (x, y); false when the server reports an error.
bool CX11Shims_shmImageGet(Display *display, Drawable drawable, CX11Shims_ShmImage *image, int x, int y);
XImage *CX11Shims_shmImageXImage(CX11Shims_ShmImage *image);
void CX11Shims_destroyImage(XImage *image);

#endif
