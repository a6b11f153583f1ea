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

aom_codec_err_t CAOMShims_setFrameReferences(aom_codec_ctx_t *ctx, unsigned int refreshMask, int readSlot) {
    // LAST reads slot `readSlot` (0: the newest layer-0 frame); no other reference is used; every reference
    // index must still name a valid slot.
    if (readSlot < 0 || readSlot > 7) return AOM_CODEC_INVALID_PARAM;
    aom_svc_ref_frame_config_t references = {0};
    for (int reference = 0; reference < 7; reference++) references.ref_idx[reference] = readSlot;
    references.reference[0] = 1;
    for (int slot = 0; slot < 8; slot++) references.refresh[slot] = (refreshMask >> slot) & 1;
    // libaom refreshes only slots that some reference index names: the unused references (GOLDEN on) name
    // the other slots to refresh (a frame above layer 0 keeps itself in its layer's slot).
    int unused = 1;
    for (int slot = 0; slot < 8 && unused < 7; slot++) {
        if (slot != readSlot && ((refreshMask >> slot) & 1)) references.ref_idx[unused++] = slot;
    }
    return aom_codec_control(ctx, AV1E_SET_SVC_REF_FRAME_CONFIG, &references);
}
