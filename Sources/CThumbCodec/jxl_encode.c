#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jxl/encode.h>
#include "decoder.h"
#include "thumbd_jxl.h"

// Lossy JPEG XL through libjxl 0.7: VarDCT in XYB, a bare codestream (no
// container: no box needs one, and it is 40-odd bytes smaller), sRGB stated
// as an enumerated colour encoding (no ICC), no Exif or XMP. No parallel
// runner: one thread, as every encoder in a worker.

static int failed(const char *what, JxlEncoder *enc, char *message, size_t message_size) {
    char text[128];
    JxlEncoderError error = enc ? JxlEncoderGetError(enc) : JXL_ENC_ERR_GENERIC;
    snprintf(text, sizeof text, "JPEG XL encoding failed: %s (libjxl error %d)", what, (int)error);
    thumbd_set_message(message, message_size, text);
    return error == JXL_ENC_ERR_OOM ? THUMBD_NO_MEMORY : THUMBD_FAILED;
}

// The encoded bytes, grown as libjxl asks, into a malloc'd buffer the caller frees.
static int drain(JxlEncoder *enc, size_t guess, void **out, size_t *out_length, char *message, size_t message_size) {
    size_t capacity = guess < 4096 ? 4096 : guess, used = 0;
    uint8_t *buffer = malloc(capacity);
    for (;;) {
        if (!buffer) {
            thumbd_set_message(message, message_size, "out of memory");
            return THUMBD_NO_MEMORY;
        }
        uint8_t *next = buffer + used;
        size_t avail = capacity - used;
        JxlEncoderStatus result = JxlEncoderProcessOutput(enc, &next, &avail);
        used = (size_t)(next - buffer);
        if (result == JXL_ENC_SUCCESS) break;
        if (result != JXL_ENC_NEED_MORE_OUTPUT) {
            free(buffer);
            return failed("ProcessOutput", enc, message, message_size);
        }
        capacity *= 2;
        uint8_t *grown = realloc(buffer, capacity);
        if (!grown) free(buffer);
        buffer = grown;
    }
    *out = buffer;
    *out_length = used;
    return THUMBD_OK;
}

int thumbd_jxl_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, float distance, int effort,
                      thumbd_deadline deadline, void **out, size_t *out_length, char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    if (thumbd_deadline_passed(deadline)) {
        thumbd_set_message(message, message_size, "render deadline passed");
        return THUMBD_DEADLINE;
    }
    size_t pixels = (size_t)width * height;
    // An opaque bitmap is given as RGB, so that the file has no alpha channel at all.
    uint8_t *rgb = NULL;
    if (!has_alpha) {
        rgb = malloc(pixels * 3 ? pixels * 3 : 1);
        if (!rgb) {
            thumbd_set_message(message, message_size, "out of memory");
            return THUMBD_NO_MEMORY;
        }
        const uint8_t *from = rgba;
        for (size_t i = 0; i < pixels; i++) memcpy(rgb + i * 3, from + i * 4, 3);
    }
    JxlEncoder *enc = JxlEncoderCreate(NULL);
    if (!enc) {
        free(rgb);
        thumbd_set_message(message, message_size, "out of memory");
        return THUMBD_NO_MEMORY;
    }
    int status = THUMBD_OK;
    JxlBasicInfo basic;
    JxlEncoderInitBasicInfo(&basic);
    basic.xsize = width;
    basic.ysize = height;
    basic.bits_per_sample = 8;
    basic.num_color_channels = 3;
    basic.uses_original_profile = JXL_FALSE;   // lossy: XYB
    if (has_alpha) {
        basic.alpha_bits = 8;
        basic.num_extra_channels = 1;
        basic.alpha_premultiplied = JXL_FALSE;   // thumbd's bitmaps are straight alpha
    }
    JxlColorEncoding srgb;
    JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE);
    JxlEncoderFrameSettings *settings = NULL;
    const JxlPixelFormat format = { has_alpha ? 4 : 3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
    if (JxlEncoderUseContainer(enc, JXL_FALSE) != JXL_ENC_SUCCESS
        || JxlEncoderSetBasicInfo(enc, &basic) != JXL_ENC_SUCCESS) {
        status = failed("basic info", enc, message, message_size);
    } else if (JxlEncoderSetColorEncoding(enc, &srgb) != JXL_ENC_SUCCESS) {
        status = failed("colour encoding", enc, message, message_size);
    } else if (!(settings = JxlEncoderFrameSettingsCreate(enc, NULL))
               || JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS
               || JxlEncoderSetFrameDistance(settings, distance) != JXL_ENC_SUCCESS) {
        status = failed("frame settings", enc, message, message_size);
    } else if (JxlEncoderAddImageFrame(settings, &format, has_alpha ? rgba : rgb,
                                       pixels * (has_alpha ? 4 : 3)) != JXL_ENC_SUCCESS) {
        status = failed("frame", enc, message, message_size);
    } else {
        JxlEncoderCloseInput(enc);
        status = drain(enc, pixels / 4, out, out_length, message, message_size);
    }
    free(rgb);
    JxlEncoderDestroy(enc);
    return status;
}
