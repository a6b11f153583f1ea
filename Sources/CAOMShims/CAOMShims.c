#include "CAOMShims.h"

aom_codec_err_t CAOMShims_encoderInit(aom_codec_ctx_t *ctx, aom_codec_iface_t *iface, const aom_codec_enc_cfg_t *cfg) {
    return aom_codec_enc_init(ctx, iface, cfg, 0);
}

aom_codec_err_t CAOMShims_decoderInit(aom_codec_ctx_t *ctx, aom_codec_iface_t *iface, unsigned int threads) {
    aom_codec_dec_cfg_t cfg = {.threads = threads, .w = 0, .h = 0, .allow_lowbitdepth = 1};
    return aom_codec_dec_init(ctx, iface, &cfg, 0);
}

aom_codec_err_t CAOMShims_controlInt(aom_codec_ctx_t *ctx, int control, int value) {
    return aom_codec_control(ctx, control, value);
}

aom_codec_err_t CAOMShims_setActiveMap(aom_codec_ctx_t *ctx, unsigned char *active, unsigned int rows, unsigned int cols) {
    aom_active_map_t map = {.active_map = active, .rows = rows, .cols = cols};
    return aom_codec_control(ctx, AOME_SET_ACTIVEMAP, &map);
}

int CAOMShims_lastQuantizer(aom_codec_ctx_t *ctx) {
    int quantizer = -1;
    return aom_codec_control(ctx, AOME_GET_LAST_QUANTIZER_64, &quantizer) == AOM_CODEC_OK ? quantizer : -1;
}

aom_codec_err_t CAOMShims_setFrameReferences(aom_codec_ctx_t *ctx, unsigned int refreshMask) {
    // LAST reads slot 0 (the newest layer-0 frame); no other reference is used; every reference index must
    // still name a valid slot.
    aom_svc_ref_frame_config_t references = {0};
    for (int reference = 0; reference < 7; reference++) references.ref_idx[reference] = 0;
    references.reference[0] = 1;
    for (int slot = 0; slot < 8; slot++) references.refresh[slot] = (refreshMask >> slot) & 1;
    return aom_codec_control(ctx, AV1E_SET_SVC_REF_FRAME_CONFIG, &references);
}
