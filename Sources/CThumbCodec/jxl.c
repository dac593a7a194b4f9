#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jxl/decode.h>
#include <jxl/encode.h>
#include "decoder.h"
#include "thumbd_jxl.h"

// JPEG XL through libjxl 0.7, a bare codestream (FF 0A) or the ISOBMFF
// container (libjxl reads both, jxlc and jxlp boxes alike). The whole file
// is given at once and the input closed, so a file that ends early is an
// error, never a wait for more. Orientation is kept (JxlDecoderSetKeepOrientation):
// thumbd turns the image itself, as it does a JPEG's, from the orientation
// the probe reports. No parallel runner: libjxl runs on the caller's thread.

static void say(char *message, size_t message_size, const char *text) {
    thumbd_set_message(message, message_size, text);
}

// A decoder over the whole file, subscribed to `events`.
static JxlDecoder *start(const void *data, size_t length, int events, int *status, char *message, size_t message_size) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) {
        *status = THUMBD_NO_MEMORY;
        say(message, message_size, "out of memory");
        return NULL;
    }
    if (JxlDecoderSubscribeEvents(dec, events) != JXL_DEC_SUCCESS
        || JxlDecoderSetKeepOrientation(dec, JXL_TRUE) != JXL_DEC_SUCCESS
        || JxlDecoderSetUnpremultiplyAlpha(dec, JXL_TRUE) != JXL_DEC_SUCCESS
        || JxlDecoderSetInput(dec, data, length) != JXL_DEC_SUCCESS) {
        JxlDecoderDestroy(dec);
        *status = THUMBD_FAILED;
        say(message, message_size, "libjxl refused the decoder's settings");
        return NULL;
    }
    JxlDecoderCloseInput(dec);
    *status = THUMBD_OK;
    return dec;
}

// Fills `info` from the basic info; THUMBD_TOO_LARGE over max_pixels.
static int read_basic_info(JxlDecoder *dec, uint64_t max_pixels, JxlBasicInfo *basic, thumbd_image_info *info,
                           char *message, size_t message_size) {
    if (JxlDecoderGetBasicInfo(dec, basic) != JXL_DEC_SUCCESS) {
        say(message, message_size, "JPEG XL basic info unreadable");
        return THUMBD_CORRUPT;
    }
    info->width = basic->xsize;
    info->height = basic->ysize;
    info->orientation = basic->orientation >= 1 && basic->orientation <= 8 ? (int32_t)basic->orientation : 1;
    info->has_alpha = basic->alpha_bits > 0 ? 1 : 0;
    info->bit_depth = basic->bits_per_sample > 0 ? (int32_t)basic->bits_per_sample : 8;
    info->color_model = basic->num_color_channels == 1 ? THUMBD_GRAY : THUMBD_RGB;
    info->components = 4;
    if ((uint64_t)basic->xsize * basic->ysize > max_pixels) {
        say(message, message_size, "JPEG XL image is larger than the pixel limit");
        return THUMBD_TOO_LARGE;
    }
    if (basic->xsize == 0 || basic->ysize == 0) {
        say(message, message_size, "JPEG XL image has no pixels");
        return THUMBD_CORRUPT;
    }
    return THUMBD_OK;
}

int thumbd_jxl_probe(const void *data, size_t length, uint64_t max_pixels, uint32_t max_frames,
                     thumbd_image_info *info, uint32_t *frames, char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    info->orientation = 1;
    *frames = 0;
    int status;
    JxlDecoder *dec = start(data, length, JXL_DEC_BASIC_INFO | JXL_DEC_FRAME, &status, message, message_size);
    if (!dec) return status;
    int have_info = 0;
    JxlBasicInfo basic;
    for (;;) {
        JxlDecoderStatus event = JxlDecoderProcessInput(dec);
        if (event == JXL_DEC_BASIC_INFO) {
            status = read_basic_info(dec, max_pixels, &basic, info, message, message_size);
            if (status != THUMBD_OK) break;
            have_info = 1;
        } else if (event == JXL_DEC_FRAME) {
            // No pixel event is subscribed: the next call skips this frame's
            // sections (its table of contents gives their sizes) to the next header.
            if (++*frames > max_frames) break;
        } else if (event == JXL_DEC_SUCCESS) {
            break;
        } else {
            // JXL_DEC_ERROR, or more input wanted after the input was closed:
            // truncated or invalid. Before the basic info nothing stands.
            if (!have_info) {
                status = THUMBD_CORRUPT;
                say(message, message_size, event == JXL_DEC_NEED_MORE_INPUT ? "JPEG XL header is truncated"
                                                                           : "not a valid JPEG XL header");
            }
            break;
        }
    }
    JxlDecoderDestroy(dec);
    if (status == THUMBD_OK && *frames == 0) *frames = 1;
    info->animated = status == THUMBD_OK && *frames >= 2;
    return status;
}

typedef struct {
    uint8_t *pixels;
    int model;
} jxl_state;

static void release_jxl(thumbd_decoder *d) {
    jxl_state *s = d->state;
    if (!s) return;
    free(s->pixels);
    free(s);
}

int thumbd_jxl_color_model(const thumbd_decoder *d) {
    const jxl_state *s = d->state;
    return s ? s->model : THUMBD_RGB;
}

static thumbd_decoder *fail(thumbd_decoder *d, JxlDecoder *dec, int *status, int code, char *message,
                            size_t message_size, const char *text) {
    *status = code;
    if (text) say(message, message_size, text);
    if (dec) JxlDecoderDestroy(dec);
    thumbd_decoder_close(d);
    return NULL;
}

// An enumerated colour encoding libjxl can state as H.273 codes: RGB or grey
// with a D65 white point, known primaries (grey has none: BT.709's stand in)
// and a named transfer (not a bare gamma).
static int as_nclx(const JxlColorEncoding *c, thumbd_nclx *nclx) {
    if (c->white_point != JXL_WHITE_POINT_D65) return 0;
    if (c->color_space != JXL_COLOR_SPACE_RGB && c->color_space != JXL_COLOR_SPACE_GRAY) return 0;
    int primaries = c->color_space == JXL_COLOR_SPACE_GRAY ? JXL_PRIMARIES_SRGB : (int)c->primaries;
    if (primaries != JXL_PRIMARIES_SRGB && primaries != JXL_PRIMARIES_2100 && primaries != JXL_PRIMARIES_P3) return 0;
    if (c->transfer_function == JXL_TRANSFER_FUNCTION_GAMMA || c->transfer_function == JXL_TRANSFER_FUNCTION_UNKNOWN)
        return 0;
    nclx->primaries = primaries;
    nclx->transfer = (int)c->transfer_function;
    return 1;
}

// At JXL_DEC_COLOR_ENCODING. XYB pixels can be rendered in any colour
// encoding: sRGB is asked for, and nothing is left to convert. Others are
// delivered in their own space, described for ColorHandling. Returns 0 only
// when out of memory.
static int read_color(JxlDecoder *dec, const JxlBasicInfo *basic, thumbd_decoder *d) {
    if (!basic->uses_original_profile) {
        JxlColorEncoding srgb;
        JxlColorEncodingSetToSRGB(&srgb, basic->num_color_channels == 1);
        // libjxl renders XYB to any enumerated encoding; should it refuse, its
        // default for XYB is sRGB too (when the original is not an ICC profile).
        JxlDecoderSetPreferredColorProfile(dec, &srgb);
        return 1;
    }
    JxlColorEncoding encoding;
    if (JxlDecoderGetColorAsEncodedProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS
        && as_nclx(&encoding, &d->nclx))
        return 1;
    size_t size = 0;
    if (JxlDecoderGetICCProfileSize(dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &size) != JXL_DEC_SUCCESS
        || size == 0 || size > THUMBD_ICC_MAX_BYTES)
        return 1;   // no usable description: the pixels are taken as sRGB
    d->profile = malloc(size);
    if (!d->profile) return 0;
    if (JxlDecoderGetColorAsICCProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, d->profile, size) != JXL_DEC_SUCCESS) {
        free(d->profile);
        d->profile = NULL;
        return 1;
    }
    d->profile_length = size;
    return 1;
}

thumbd_decoder *thumbd_jxl_open(const void *data, size_t length, uint64_t max_pixels, thumbd_deadline deadline,
                                uint32_t *out_width, uint32_t *out_height,
                                int *status, char *message, size_t message_size) {
    thumbd_decoder *d = thumbd_decoder_new(status, message, message_size);
    jxl_state *s = d ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(d);
        *status = THUMBD_NO_MEMORY;
        say(message, message_size, "out of memory");
        return NULL;
    }
    d->state = s;
    d->release = release_jxl;
    JxlDecoder *dec = start(data, length, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE,
                            status, message, message_size);
    if (!dec) return fail(d, NULL, status, *status, message, message_size, NULL);
    JxlBasicInfo basic;
    thumbd_image_info info = { 0 };
    int have_info = 0;
    const JxlPixelFormat format = { 4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
    for (;;) {
        if (thumbd_deadline_passed(deadline))
            return fail(d, dec, status, THUMBD_DEADLINE, message, message_size, "render deadline passed");
        JxlDecoderStatus event = JxlDecoderProcessInput(dec);
        if (event == JXL_DEC_BASIC_INFO) {
            int code = read_basic_info(dec, max_pixels, &basic, &info, message, message_size);
            if (code != THUMBD_OK) return fail(d, dec, status, code, message, message_size, NULL);
            s->model = info.color_model;
            have_info = 1;
        } else if (event == JXL_DEC_COLOR_ENCODING) {
            if (!read_color(dec, &basic, d)) return fail(d, dec, status, THUMBD_NO_MEMORY, message, message_size, "out of memory");
        } else if (event == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size = 0;
            if (!have_info || JxlDecoderImageOutBufferSize(dec, &format, &size) != JXL_DEC_SUCCESS
                || size != (size_t)basic.xsize * basic.ysize * 4)
                return fail(d, dec, status, THUMBD_CORRUPT, message, message_size, "JPEG XL frame differs from its header");
            s->pixels = malloc(size);
            if (!s->pixels) return fail(d, dec, status, THUMBD_NO_MEMORY, message, message_size, "out of memory");
            if (JxlDecoderSetImageOutBuffer(dec, &format, s->pixels, size) != JXL_DEC_SUCCESS)
                return fail(d, dec, status, THUMBD_FAILED, message, message_size, "libjxl refused the output buffer");
        } else if (event == JXL_DEC_FULL_IMAGE) {
            break;   // the first displayed frame; the rest of the file is never read
        } else if (event == JXL_DEC_SUCCESS) {
            return fail(d, dec, status, THUMBD_CORRUPT, message, message_size, "JPEG XL file has no frame");
        } else {
            return fail(d, dec, status, THUMBD_CORRUPT, message, message_size,
                        event == JXL_DEC_NEED_MORE_INPUT ? "JPEG XL data is truncated" : "undecodable JPEG XL data");
        }
    }
    JxlDecoderDestroy(dec);
    d->width = basic.xsize;
    d->height = basic.ysize;
    d->pixels = s->pixels;
    d->stride = (size_t)basic.xsize * 4;
    *out_width = d->width;
    *out_height = d->height;
    *status = THUMBD_OK;
    return d;
}
