#include "CVPXShims.h"


// MARK: libvpx

vpx_codec_err_t CVPXShims_vpxEncoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                            const vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_init(ctx, iface, cfg, 0);
}

vpx_codec_err_t CVPXShims_vpxDecoderInit(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, unsigned int threads) {
    vpx_codec_dec_cfg_t cfg = {.threads = threads, .w = 0, .h = 0};
    return vpx_codec_dec_init(ctx, iface, &cfg, 0);
}

vpx_codec_err_t CVPXShims_vpxControlInt(vpx_codec_ctx_t *ctx, int control, int value) {
    return vpx_codec_control_(ctx, control, value);
}

vpx_codec_err_t CVPXShims_vpxSetActiveMap(vpx_codec_ctx_t *ctx, unsigned char *active, unsigned int rows, unsigned int cols) {
    vpx_active_map_t map = {.active_map = active, .rows = rows, .cols = cols};
    return vpx_codec_control_(ctx, VP8E_SET_ACTIVEMAP, &map);
}

int CVPXShims_vpxLastQuantizer(vpx_codec_ctx_t *ctx) {
    int quantizer = -1;
    return vpx_codec_control_(ctx, VP8E_GET_LAST_QUANTIZER_64, &quantizer) == VPX_CODEC_OK ? quantizer : -1;
}
