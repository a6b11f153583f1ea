// x264-probe WIDTH HEIGHT FPS KBPS IN.yuv OUT.264 PRESET: libx264 as a realtime screen encoder would use it
// (zerolatency, CBR with a one-second buffer, High profile, one thread, keyframes never but the first).
#include "probe-common.h"
#include <x264.h>

int main(int argc, char **argv) {
    if (argc < 8) { fprintf(stderr, "usage: x264-probe W H FPS KBPS IN OUT PRESET\n"); return 2; }
    int width = atoi(argv[1]), height = atoi(argv[2]), kbps = atoi(argv[4]);
    FILE *in = fopen(argv[5], "rb"), *out = fopen(argv[6], "wb");
    if (!in || !out) { perror("open"); return 1; }
    x264_param_t param;
    x264_param_default_preset(&param, argv[7], "zerolatency");
    param.i_width = width; param.i_height = height; param.i_fps_num = atoi(argv[3]); param.i_fps_den = 1;
    param.i_threads = 1; param.b_sliced_threads = 0; param.i_csp = X264_CSP_I420;
    param.rc.i_rc_method = X264_RC_ABR; param.rc.i_bitrate = kbps; param.rc.i_vbv_max_bitrate = kbps; param.rc.i_vbv_buffer_size = kbps;
    param.i_keyint_max = X264_KEYINT_MAX_INFINITE; param.b_repeat_headers = 1; param.b_annexb = 1; param.i_log_level = X264_LOG_ERROR;
    x264_param_apply_profile(&param, "high");
    x264_t *encoder = x264_encoder_open(&param);
    x264_picture_t picture, coded;
    x264_picture_alloc(&picture, X264_CSP_I420, width, height);
    size_t size = (size_t)width * height * 3 / 2;
    uint8_t *frame = malloc(size);
    long bytes = 0; int frames = 0; double seconds = 0;
    while (fread(frame, 1, size, in) == size) {
        memcpy(picture.img.plane[0], frame, (size_t)width * height);
        memcpy(picture.img.plane[1], frame + width * height, (size_t)width * height / 4);
        memcpy(picture.img.plane[2], frame + width * height * 5 / 4, (size_t)width * height / 4);
        picture.i_pts = frames++;
        x264_nal_t *nals; int count;
        double started = cpu_seconds();
        int written = x264_encoder_encode(encoder, &nals, &count, &picture, &coded);
        seconds += cpu_seconds() - started;
        if (written > 0) { fwrite(nals[0].p_payload, 1, written, out); bytes += written; }
    }
    x264_encoder_close(encoder);
    report("x264", frames, seconds, bytes, 0);
    return 0;
}
