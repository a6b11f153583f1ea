// C helpers for libavutil's error macros.
// Every symbol is prefixed CAVFormatShims_.
#ifndef CAVFORMATSHIMS_H
#define CAVFORMATSHIMS_H


// MARK: libavformat

int CAVFormatShims_averrorEAGAIN(void);
int CAVFormatShims_averrorEOF(void);

#endif
