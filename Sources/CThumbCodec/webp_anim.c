// An animated WebP read frame by frame (thumbd_anim.h) through libwebpdemux's
// WebPAnimDecoder, which composites blending and disposal itself on a
// transparent canvas. It holds two canvases (the current one and the previous
// one after disposal) plus, while a frame decodes, libwebp's own buffers for
// that frame (a lossless frame's ARGB image): ImageDecoder's animation
// estimate counts three canvases.
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include "anim.h"
#include "decoder.h"
#include "webp_common.h"

typedef struct {
    WebPAnimDecoder *decoder;
    int timestamp;   // end of the last frame handed out, in ms
} webp_anim;

static void release(thumbd_anim *a) {
    webp_anim *s = a->state;
    if (!s) return;
    WebPAnimDecoderDelete(s->decoder);
    free(s);
}

static int next(thumbd_anim *a, thumbd_deadline deadline, const uint8_t **canvas, int32_t *duration_ms,
                char *message, size_t message_size) {
    (void)deadline;   // WebPAnimDecoderGetNext has no hook: checked between frames only
    webp_anim *s = a->state;
    if (!WebPAnimDecoderHasMoreFrames(s->decoder)) return THUMBD_OK;
    uint8_t *pixels;
    int timestamp;
    if (!WebPAnimDecoderGetNext(s->decoder, &pixels, &timestamp)) {
        thumbd_set_message(message, message_size, "WebP frame does not decode");
        return THUMBD_CORRUPT;
    }
    // WebPAnimDecoder gives each frame's end time; a frame's duration is the step.
    *duration_ms = timestamp - s->timestamp;
    s->timestamp = timestamp;
    *canvas = pixels;
    return THUMBD_OK;
}

static thumbd_anim *fail(thumbd_anim *a, int *status, int code, const char *why, char *message, size_t message_size) {
    *status = code;
    thumbd_set_message(message, message_size, why);
    thumbd_anim_close(a);
    return NULL;
}

thumbd_anim *thumbd_webp_anim_open(const void *data, size_t length, uint64_t max_pixels,
                                   uint32_t *width, uint32_t *height, int *status, char *message, size_t message_size) {
    thumbd_anim *a = thumbd_anim_new(sizeof(webp_anim), next, release, status, message, message_size);
    if (!a) return NULL;
    webp_anim *s = a->state;
    // The canvas size first (WebPAnimDecoderNew allocates two canvases):
    // the probe checked it, but this reader may be handed any bytes.
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, length, &features) != VP8_STATUS_OK)
        return fail(a, status, THUMBD_CORRUPT, "invalid WebP header", message, message_size);
    if ((uint64_t)features.width * (uint64_t)features.height > max_pixels)
        return fail(a, status, THUMBD_TOO_LARGE, "WebP canvas is larger than the pixel limit", message, message_size);
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options))
        return fail(a, status, THUMBD_FAILED, "libwebpdemux version mismatch", message, message_size);
    options.color_mode = MODE_RGBA;   // straight alpha, as every decoder here gives
    options.use_threads = 0;          // one render, one thread
    WebPData bytes = { data, length };
    s->decoder = WebPAnimDecoderNew(&bytes, &options);
    if (!s->decoder)
        return fail(a, status, THUMBD_CORRUPT, "invalid or truncated animated WebP", message, message_size);
    WebPAnimInfo info;
    if (!WebPAnimDecoderGetInfo(s->decoder, &info) || info.frame_count == 0)
        return fail(a, status, THUMBD_CORRUPT, "WebP has no image frame", message, message_size);
    if (!thumbd_webp_copy_profile(WebPAnimDecoderGetDemuxer(s->decoder), &a->profile, &a->profile_length))
        return fail(a, status, THUMBD_NO_MEMORY, "out of memory for the WebP colour profile", message, message_size);
    a->width = info.canvas_width;
    a->height = info.canvas_height;
    *width = a->width;
    *height = a->height;
    *status = THUMBD_OK;
    return a;
}
