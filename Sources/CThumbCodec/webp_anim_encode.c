// The animated WebP encoder (thumbd_anim.h) over libwebpmux's WebPAnimEncoder.
// It keeps three canvases of the output size, the candidate sub-frames of
// the frame being added and, until the end, every encoded frame (its mux);
// the frames themselves are never kept.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include "decoder.h"
#include "thumbd_anim.h"

struct thumbd_webp_anim_encoder {
    WebPAnimEncoder *encoder;
    WebPConfig config;
    uint32_t width, height;
    int timestamp;   // start of the next frame, in ms
    // The hook's user data: WebPAnimEncoder keeps the pointer on its canvas
    // copy after the call, so it points here rather than at a local.
    thumbd_deadline deadline;
};

// libwebp calls this between macroblock rows; 0 aborts the encode.
// WebPAnimEncoder copies the added picture's hook onto its own canvas copy.
static int progress(int percent, const WebPPicture *picture) {
    (void)percent;
    return !thumbd_deadline_passed(*(const thumbd_deadline *)picture->user_data);
}

void thumbd_webp_anim_encoder_free(thumbd_webp_anim_encoder *e) {
    if (!e) return;
    WebPAnimEncoderDelete(e->encoder);
    free(e);
}

thumbd_webp_anim_encoder *thumbd_webp_anim_encoder_new(uint32_t width, uint32_t height, int quality, int loop_count,
                                                       int *status, char *message, size_t message_size) {
    thumbd_webp_anim_encoder *e = calloc(1, sizeof *e);
    if (!e) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    e->width = width;
    e->height = height;
    // As the still encoder (encode.c): lossy at `quality`, alpha lossless.
    if (!WebPConfigPreset(&e->config, WEBP_PRESET_DEFAULT, (float)quality)) {
        free(e);
        *status = THUMBD_FAILED;
        thumbd_set_message(message, message_size, "libwebp version mismatch");
        return NULL;
    }
    e->config.alpha_compression = 1;
    e->config.alpha_quality = 100;
    e->config.method = 4;
    WebPAnimEncoderOptions options;
    if (!WebPValidateConfig(&e->config) || !WebPAnimEncoderOptionsInit(&options)) {
        free(e);
        *status = THUMBD_FAILED;
        thumbd_set_message(message, message_size, "invalid WebP configuration");
        return NULL;
    }
    // Key frames off (libwebp's default): each frame is coded against the
    // one before, and no undecided candidates wait in memory.
    options.anim_params.loop_count = loop_count < 0 ? 0 : loop_count > 65535 ? 65535 : loop_count;
    // Only a hint (browsers ignore it); the canvas is transparent, as decoded.
    options.anim_params.bgcolor = 0x00000000;
    options.allow_mixed = 0;
    options.minimize_size = 0;
    e->encoder = WebPAnimEncoderNew((int)width, (int)height, &options);
    if (!e->encoder) {
        free(e);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "cannot start the WebP animation encoder");
        return NULL;
    }
    *status = THUMBD_OK;
    return e;
}

int thumbd_webp_anim_encoder_add(thumbd_webp_anim_encoder *e, const void *rgba, int32_t duration_ms,
                                 thumbd_deadline deadline, char *message, size_t message_size) {
    if (thumbd_deadline_passed(deadline)) {
        thumbd_set_message(message, message_size, "render deadline passed");
        return THUMBD_DEADLINE;
    }
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) {
        thumbd_set_message(message, message_size, "libwebp version mismatch");
        return THUMBD_FAILED;
    }
    picture.width = (int)e->width;
    picture.height = (int)e->height;
    picture.use_argb = 1;
    picture.progress_hook = progress;
    e->deadline = deadline;
    picture.user_data = &e->deadline;
    // RGBA always: libwebp writes an alpha plane only for sub-frames that have one.
    int ok = WebPPictureImportRGBA(&picture, rgba, (int)e->width * 4);
    if (ok) ok = WebPAnimEncoderAdd(e->encoder, &picture, e->timestamp, &e->config);
    int status = THUMBD_OK;
    if (!ok && picture.error_code == VP8_ENC_ERROR_USER_ABORT) {
        thumbd_set_message(message, message_size, "render deadline passed");
        status = THUMBD_DEADLINE;
    } else if (!ok) {
        const char *why = WebPAnimEncoderGetError(e->encoder);
        thumbd_set_message(message, message_size, why && *why ? why : "WebP animation encoding failed");
        status = picture.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ? THUMBD_NO_MEMORY : THUMBD_FAILED;
    } else {
        // A 0-ms frame stays 0 ms (libwebp takes equal timestamps); the total
        // stays an int (libwebp's timestamps).
        int step = duration_ms < 0 ? 0 : duration_ms;
        e->timestamp = step > INT_MAX - e->timestamp ? INT_MAX : e->timestamp + step;
    }
    WebPPictureFree(&picture);
    return status;
}

int thumbd_webp_anim_encoder_finish(thumbd_webp_anim_encoder *e, void **out, size_t *out_length,
                                    char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    WebPData assembled;
    WebPDataInit(&assembled);
    // The NULL frame gives the last frame its duration.
    if (!WebPAnimEncoderAdd(e->encoder, NULL, e->timestamp, NULL) || !WebPAnimEncoderAssemble(e->encoder, &assembled)) {
        const char *why = WebPAnimEncoderGetError(e->encoder);
        thumbd_set_message(message, message_size, why && *why ? why : "WebP animation assembly failed");
        WebPDataClear(&assembled);
        return THUMBD_FAILED;
    }
    // The encoder's mux holds every frame once more: gone before the copy.
    WebPAnimEncoderDelete(e->encoder);
    e->encoder = NULL;
    int status = THUMBD_OK;
    *out = malloc(assembled.size ? assembled.size : 1);
    if (*out) {
        memcpy(*out, assembled.bytes, assembled.size);
        *out_length = assembled.size;
    } else {
        thumbd_set_message(message, message_size, "out of memory");
        status = THUMBD_NO_MEMORY;
    }
    WebPDataClear(&assembled);
    return status;
}
