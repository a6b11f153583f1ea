#include "CAVFormatShims.h"

#include <libavutil/error.h>

// MARK: libavformat

int CAVFormatShims_averrorEAGAIN(void) { return AVERROR(EAGAIN); }
int CAVFormatShims_averrorEOF(void) { return AVERROR_EOF; }
