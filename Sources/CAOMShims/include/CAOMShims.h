// C helpers for libaom's function-like macros (codec init) and its variadic control call.
// Every symbol is prefixed CAOMShims_.
#ifndef CAOMSHIMS_H
#define CAOMSHIMS_H

#include <aom/aom_encoder.h>
#include <aom/aom_decoder.h>
#include <aom/aomcx.h>
#include <aom/aomdx.h>

aom_codec_err_t CAOMShims_encoderInit(aom_codec_ctx_t *ctx, aom_codec_iface_t *iface, const aom_codec_enc_cfg_t *cfg);
aom_codec_err_t CAOMShims_decoderInit(aom_codec_ctx_t *ctx, aom_codec_iface_t *iface, unsigned int threads);
aom_codec_err_t CAOMShims_controlInt(aom_codec_ctx_t *ctx, int control, int value);
// Restricts encoding to the blocks marked 1 in `active` (rows × cols of 16×16 blocks); NULL lifts it.
aom_codec_err_t CAOMShims_setActiveMap(aom_codec_ctx_t *ctx, unsigned char *active, unsigned int rows, unsigned int cols);
// The quantizer (0–63) of the last frame encoded; -1 when the library cannot tell.
int CAOMShims_lastQuantizer(aom_codec_ctx_t *ctx);
// The next frame's references: it predicts from slot 0 only (as LAST) and stores itself in the slots of
// `refreshMask` (bit i: slot i); LAST is slot `readSlot` (0 but for a part of a refinement above layer 0).
aom_codec_err_t CAOMShims_setFrameReferences(aom_codec_ctx_t *ctx, unsigned int refreshMask, int readSlot);

#endif
