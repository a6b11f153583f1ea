// C helpers for openh264, whose encoder and decoder are C++ objects that C reaches through a table of function
// pointers (`(*encoder)->EncodeFrame(encoder, …)`): one plain function a call. Every symbol is prefixed
// COpenH264Shims_.
#ifndef COPENH264SHIMS_H
#define COPENH264SHIMS_H

#include <wels/codec_api.h>

// The encoder, its library messages limited to errors; NULL when it cannot be created.
ISVCEncoder *COpenH264Shims_createEncoder(void);
void COpenH264Shims_destroyEncoder(ISVCEncoder *encoder);
int COpenH264Shims_defaultParameters(ISVCEncoder *encoder, SEncParamExt *parameters);
int COpenH264Shims_initialize(ISVCEncoder *encoder, const SEncParamExt *parameters);
int COpenH264Shims_setOption(ISVCEncoder *encoder, ENCODER_OPTION option, void *value);
int COpenH264Shims_forceIntraFrame(ISVCEncoder *encoder);
int COpenH264Shims_encodeFrame(ISVCEncoder *encoder, const SSourcePicture *picture, SFrameBSInfo *info);

// The decoder, its library messages limited to errors; NULL when it cannot be created or initialized.
ISVCDecoder *COpenH264Shims_createDecoder(void);
void COpenH264Shims_destroyDecoder(ISVCDecoder *decoder);
// Decodes an access unit at once; the picture's planes are in `planes` when `info->iBufferStatus` is 1.
DECODING_STATE COpenH264Shims_decode(ISVCDecoder *decoder, const unsigned char *bytes, int count, unsigned char *planes[3], SBufferInfo *info);

#endif
