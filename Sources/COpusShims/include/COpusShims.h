// C helpers for libopus's variadic opus_encoder_ctl, which Swift cannot call.
// Every symbol is prefixed COpusShims_.
#ifndef COPUSSHIMS_H
#define COPUSSHIMS_H

#include <opus/opus.h>

int COpusShims_setBitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond);
int COpusShims_setInbandFEC(OpusEncoder *encoder, int enabled);
int COpusShims_setPacketLossPercent(OpusEncoder *encoder, int percent);
int COpusShims_setDTX(OpusEncoder *encoder, int enabled);
int COpusShims_setComplexity(OpusEncoder *encoder, int complexity);
int COpusShims_getLookahead(OpusEncoder *encoder, opus_int32 *samples);
/// 1 when the last frame the encoder produced was a DTX frame (silence, nearly nothing sent).
int COpusShims_inDTX(OpusEncoder *encoder, opus_int32 *inDTX);

#endif
