#include "COpenH264Shims.h"
#include <string.h>

ISVCEncoder *COpenH264Shims_createEncoder(void) {
    ISVCEncoder *encoder = NULL;
    if (WelsCreateSVCEncoder(&encoder) != 0 || encoder == NULL) return NULL;
    int level = WELS_LOG_ERROR;
    (*encoder)->SetOption(encoder, ENCODER_OPTION_TRACE_LEVEL, &level);
    return encoder;
}

void COpenH264Shims_destroyEncoder(ISVCEncoder *encoder) {
    if (encoder == NULL) return;
    (*encoder)->Uninitialize(encoder);
    WelsDestroySVCEncoder(encoder);
}

int COpenH264Shims_defaultParameters(ISVCEncoder *encoder, SEncParamExt *parameters) {
    memset(parameters, 0, sizeof *parameters);
    return (*encoder)->GetDefaultParams(encoder, parameters);
}

int COpenH264Shims_initialize(ISVCEncoder *encoder, const SEncParamExt *parameters) {
    return (*encoder)->InitializeExt(encoder, parameters);
}

int COpenH264Shims_setOption(ISVCEncoder *encoder, ENCODER_OPTION option, void *value) {
    return (*encoder)->SetOption(encoder, option, value);
}

int COpenH264Shims_forceIntraFrame(ISVCEncoder *encoder) {
    return (*encoder)->ForceIntraFrame(encoder, true);
}

int COpenH264Shims_encodeFrame(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info) {
    return (*encoder)->EncodeFrame(encoder, picture, info);
}

ISVCDecoder *COpenH264Shims_createDecoder(void) {
    ISVCDecoder *decoder = NULL;
    if (WelsCreateDecoder(&decoder) != 0 || decoder == NULL) return NULL;
    int level = WELS_LOG_ERROR;
    (*decoder)->SetOption(decoder, DECODER_OPTION_TRACE_LEVEL, &level);
    SDecodingParam parameters;
    memset(&parameters, 0, sizeof parameters);
    parameters.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
    // Conceal nothing: a frame that cannot be decoded is an error, not a guessed picture.
    parameters.eEcActiveIdc = ERROR_CON_DISABLE;
    if ((*decoder)->Initialize(decoder, &parameters) != 0) {
        WelsDestroyDecoder(decoder);
        return NULL;
    }
    return decoder;
}

void COpenH264Shims_destroyDecoder(ISVCDecoder *decoder) {
    if (decoder == NULL) return;
    (*decoder)->Uninitialize(decoder);
    WelsDestroyDecoder(decoder);
}

DECODING_STATE COpenH264Shims_decode(ISVCDecoder *decoder, const unsigned char *bytes, int count, unsigned char *planes[3], SBufferInfo *info) {
    memset(info, 0, sizeof *info);
    return (*decoder)->DecodeFrameNoDelay(decoder, bytes, count, planes, info);
}
