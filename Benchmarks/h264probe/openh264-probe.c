// openh264-probe WIDTH HEIGHT FPS KBPS IN.yuv OUT.264 SKIPS.txt: openh264 as screenpub sets it up
// (SCREEN_CONTENT_REAL_TIME, bit-rate mode holding the rate by skipping frames, Constrained Baseline, one thread);
// the frames it skipped go to SKIPS.txt, one index a line, so that SSIM can be taken of what a viewer sees.
#include "probe-common.h"
#include <wels/codec_api.h>

int main(int argc, char **argv) {
    if (argc < 8) { fprintf(stderr, "usage: openh264-probe W H FPS KBPS IN OUT SKIPS\n"); return 2; }
    int width = atoi(argv[1]), height = atoi(argv[2]), kbps = atoi(argv[4]);
    float fps = (float)atof(argv[3]);
    FILE *in = fopen(argv[5], "rb"), *out = fopen(argv[6], "wb"), *skips = fopen(argv[7], "w");
    if (!in || !out || !skips) { perror("open"); return 1; }
    ISVCEncoder *encoder = NULL;
    if (WelsCreateSVCEncoder(&encoder) || !encoder) return 1;
    int level = WELS_LOG_ERROR;
    (*encoder)->SetOption(encoder, ENCODER_OPTION_TRACE_LEVEL, &level);
    SEncParamExt param;
    (*encoder)->GetDefaultParams(encoder, &param);
    param.iUsageType = SCREEN_CONTENT_REAL_TIME; param.iPicWidth = width; param.iPicHeight = height;
    param.iTargetBitrate = kbps * 1000; param.iMaxBitrate = kbps * 2000; param.iRCMode = RC_BITRATE_MODE; param.fMaxFrameRate = fps;
    param.bEnableFrameSkip = true; param.iTemporalLayerNum = 1; param.iSpatialLayerNum = 1; param.uiIntraPeriod = 0;
    param.iMultipleThreadIdc = 1; param.iEntropyCodingModeFlag = 0; param.bEnableSceneChangeDetect = false;
    param.eSpsPpsIdStrategy = CONSTANT_ID;
    SSpatialLayerConfig *layer = &param.sSpatialLayers[0];
    layer->iVideoWidth = width; layer->iVideoHeight = height; layer->fFrameRate = fps; layer->uiProfileIdc = PRO_BASELINE;
    layer->iSpatialBitrate = kbps * 1000; layer->iMaxSpatialBitrate = kbps * 2000; layer->sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
    if ((*encoder)->InitializeExt(encoder, &param)) { fprintf(stderr, "openh264 refused the parameters\n"); return 1; }
    size_t size = (size_t)width * height * 3 / 2;
    uint8_t *frame = malloc(size);
    SSourcePicture picture;
    memset(&picture, 0, sizeof picture);
    picture.iPicWidth = width; picture.iPicHeight = height; picture.iColorFormat = videoFormatI420;
    picture.iStride[0] = width; picture.iStride[1] = picture.iStride[2] = width / 2;
    picture.pData[0] = frame; picture.pData[1] = frame + width * height; picture.pData[2] = frame + width * height * 5 / 4;
    SFrameBSInfo info;
    long bytes = 0; int frames = 0, skipped = 0; double seconds = 0;
    while (fread(frame, 1, size, in) == size) {
        picture.uiTimeStamp = (long long)(frames * 1000 / fps);
        memset(&info, 0, sizeof info);
        double started = cpu_seconds();
        int status = (*encoder)->EncodeFrame(encoder, &picture, &info);
        seconds += cpu_seconds() - started;
        if (status) { fprintf(stderr, "openh264 failed on frame %d\n", frames); return 1; }
        if (info.eFrameType == videoFrameTypeSkip) { fprintf(skips, "%d\n", frames); skipped++; }
        for (int index = 0; index < info.iLayerNum; index++) {
            SLayerBSInfo *coded = &info.sLayerInfo[index];
            int length = 0;
            for (int nal = 0; nal < coded->iNalCount; nal++) length += coded->pNalLengthInByte[nal];
            fwrite(coded->pBsBuf, 1, length, out);
            bytes += length;
        }
        frames++;
    }
    (*encoder)->Uninitialize(encoder);
    WelsDestroySVCEncoder(encoder);
    report("openh264", frames, seconds, bytes, skipped);
    return 0;
}
