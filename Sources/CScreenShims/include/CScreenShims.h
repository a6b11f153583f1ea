// C helpers for the parts of X11, libvpx and libavformat that Swift cannot call directly:
// function-like macros, variadic functions and process-wide error handlers.
// Every symbol is prefixed CScreenShims_.
#ifndef CSCREENSHIMS_H
#define CSCREENSHIMS_H

#include <stdint.h>
#include <stdbool.h>
#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// MARK: X11

/// Installs error handlers so that a protocol error or a lost server never calls exit().
/// Idempotent and thread-safe.
void CScreenShims_installXErrorHandlers(void);
/// Returns and clears the error code of the last X protocol error on this thread (0 = none).
int CScreenShims_takeXError(void);
/// Makes an I/O error on `display` (server gone) mark it lost instead of exiting the process.
void CScreenShims_watchDisplay(Display *display);
/// True once the connection to `display` failed with an I/O error; it must not be used again.
bool CScreenShims_xConnectionLost(Display *display);
/// Forgets a display's lost flag (call right before XCloseDisplay).
void CScreenShims_forgetDisplay(Display *display);

/// An XImage backed by a System V shared memory segment attached to the server.
typedef struct CScreenShims_ShmImage CScreenShims_ShmImage;
/// Creates and attaches a shared image; returns NULL (and sets *xError) when the server refuses (e.g. BadAccess
/// for a remote client) so the caller can fall back to XGetImage.
CScreenShims_ShmImage *CScreenShims_shmImageCreate(Display *display, Visual *visual, int depth,
                                                   int width, int height, int *xError);
void CScreenShims_shmImageDestroy(Display *display, CScreenShims_ShmImage *image);
/// Fills the image from `drawable` at (x, y); false when the server reports an error.
bool CScreenShims_shmImageGet(Display *display, Drawable drawable, CScreenShims_ShmImage *image, int x, int y);
XImage *CScreenShims_shmImageXImage(CScreenShims_ShmImage *image);
void CScreenShims_destroyImage(XImage *image);

// MARK: libvpx

vpx_codec_err_t CScreenShims_vpxEncoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                            const vpx_codec_enc_cfg_t *cfg);
vpx_codec_err_t CScreenShims_vpxDecoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, unsigned int threads);
vpx_codec_err_t CScreenShims_vpxControlInt(vpx_codec_ctx_t *ctx, int control, int value);
vpx_codec_err_t CScreenShims_vpxControlActiveMap(vpx_codec_ctx_t *ctx, vpx_active_map_t *map);

// MARK: threads

/// Names the calling thread (at most 15 bytes are kept), as shown by top -H and /proc/PID/task/*/comm.
void CScreenShims_setThreadName(const char *name);

// MARK: libavformat

int CScreenShims_averrorEAGAIN(void);
int CScreenShims_averrorEOF(void);

#endif
