#include "COpusShims.h"

int COpusShims_setBitrate(OpusEncoder *encoder, opus_int32 bitsPerSecond) { return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitsPerSecond)); }
int COpusShims_setInbandFEC(OpusEncoder *encoder, int enabled) { return opus_encoder_ctl(encoder, OPUS_SET_INBAND_FEC(enabled)); }
int COpusShims_setPacketLossPercent(OpusEncoder *encoder, int percent) { return opus_encoder_ctl(encoder, OPUS_SET_PACKET_LOSS_PERC(percent)); }
int COpusShims_setDTX(OpusEncoder *encoder, int enabled) { return opus_encoder_ctl(encoder, OPUS_SET_DTX(enabled)); }
int COpusShims_setComplexity(OpusEncoder *encoder, int complexity) { return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity)); }
int COpusShims_getLookahead(OpusEncoder *encoder, opus_int32 *samples) { return opus_encoder_ctl(encoder, OPUS_GET_LOOKAHEAD(samples)); }
int COpusShims_inDTX(OpusEncoder *encoder, opus_int32 *inDTX) { return opus_encoder_ctl(encoder, OPUS_GET_IN_DTX(inDTX)); }
