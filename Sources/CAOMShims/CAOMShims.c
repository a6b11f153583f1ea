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

aom_codec_err_t CAOMShims_setTemporalLayers(aom_codec_ctx_t *ctx, int layers, const int *cumulativeKbps, int minQuantizer,
                                            int maxQuantizer) {
    aom_svc_params_t params = {0};
    params.number_spatial_layers = 1;
    params.number_temporal_layers = layers;
    params.scaling_factor_num[0] = 1;
    params.scaling_factor_den[0] = 1;
    for (int layer = 0; layer < layers; layer++) {
        params.layer_target_bitrate[layer] = cumulativeKbps[layer];
        params.framerate_factor[layer] = 1 << (layers - 1 - layer);
        params.min_quantizers[layer] = minQuantizer;
        params.max_quantizers[layer] = maxQuantizer;
    }
    return aom_codec_control(ctx, AV1E_SET_SVC_PARAMS, &params);
}

aom_codec_err_t CAOMShims_setFrameLayer(aom_codec_ctx_t *ctx, int layer, unsigned int refreshMask) {
    aom_svc_layer_id_t id = {.spatial_layer_id = 0, .temporal_layer_id = layer};
    aom_codec_err_t status = aom_codec_control(ctx, AV1E_SET_SVC_LAYER_ID, &id);
    if (status != AOM_CODEC_OK) return status;
    // LAST reads slot 0 (the newest layer-0 frame); no other reference is used; every reference index must
    // still name a valid slot.
    aom_svc_ref_frame_config_t references = {0};
    for (int reference = 0; reference < 7; reference++) references.ref_idx[reference] = 0;
    references.reference[0] = 1;
    for (int slot = 0; slot < 8; slot++) references.refresh[slot] = (refreshMask >> slot) & 1;
    return aom_codec_control(ctx, AV1E_SET_SVC_REF_FRAME_CONFIG, &references);
}
