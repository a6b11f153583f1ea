// C helpers for libvpx's function-like macros (codec init and control).
// Every symbol is prefixed CVPXShims_.
#ifndef CVPXSHIMS_H
#define CVPXSHIMS_H

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// MARK: libvpx

vpx_codec_err_t CVPXShims_vpxEncoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                            const vpx_codec_enc_cfg_t *cfg);
vpx_codec_err_t CVPXShims_vpxDecoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, unsigned int threads);
vpx_codec_err_t CVPXShims_vpxControlInt(vpx_codec_ctx_t *ctx, int control, int value);
// Restricts encoding to the blocks marked 1 in `active` (rows × cols of 16×16 blocks); NULL lifts it.
vpx_codec_err_t CVPXShims_vpxSetActiveMap(vpx_codec_ctx_t *ctx, unsigned char *active, unsigned int rows, unsigned int cols);
// The quantizer (0–63) of the last frame encoded; -1 when the library cannot tell.
int CVPXShims_vpxLastQuantizer(vpx_codec_ctx_t *ctx);

#endif
