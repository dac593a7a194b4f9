#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <webp/encode.h>
#include <avif/avif.h>
#include "decoder.h"

// The libraries allocate their output with their own allocators; callers free
// ours with thumbd_free (free), so the bytes are copied into a malloc'd buffer.
static int hand_over(const uint8_t *bytes, size_t length, void **out, size_t *out_length,
                     char *message, size_t message_size) {
    *out = malloc(length ? length : 1);
    if (!*out) {
        thumbd_set_message(message, message_size, "out of memory");
        return THUMBD_NO_MEMORY;
    }
    memcpy(*out, bytes, length);
    *out_length = length;
    return THUMBD_OK;
}

// libwebp calls this between macroblock rows (and passes); 0 aborts the encode.
static int webp_progress(int percent, const WebPPicture *picture) {
    (void)percent;
    return !thumbd_deadline_passed(*(const thumbd_deadline *)picture->user_data);
}

static int deadline_passed(char *message, size_t message_size) {
    thumbd_set_message(message, message_size, "render deadline passed");
    return THUMBD_DEADLINE;
}

int thumbd_webp_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha,
                       const thumbd_webp_settings *settings, thumbd_deadline deadline,
                       void **out, size_t *out_length, char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    WebPConfig config;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, settings->quality)) {
        thumbd_set_message(message, message_size, "libwebp version mismatch");
        return THUMBD_FAILED;
    }
    config.alpha_compression = 1;   // alpha plane compressed losslessly…
    config.alpha_quality = 100;     // …and not pre-quantised (API.md § Output: alpha is lossless)
    config.method = settings->method;
    if (settings->filter_strength >= 0) config.filter_strength = settings->filter_strength;
    config.filter_sharpness = settings->filter_sharpness;
    if (settings->sns_strength >= 0) config.sns_strength = settings->sns_strength;
    if (settings->segments >= 1) config.segments = settings->segments;
    config.use_sharp_yuv = settings->sharp_yuv ? 1 : 0;
    WebPPicture picture;
    if (!WebPValidateConfig(&config) || !WebPPictureInit(&picture)) {
        thumbd_set_message(message, message_size, "invalid WebP configuration");
        return THUMBD_FAILED;
    }
    picture.width = (int)width;
    picture.height = (int)height;
    // Sharp YUV converts from ARGB inside WebPEncode: import as ARGB, not straight to YUV.
    picture.use_argb = settings->sharp_yuv ? 1 : 0;
    // RGBX drops the alpha byte, so an opaque bitmap gets no ALPH chunk.
    int ok = has_alpha ? WebPPictureImportRGBA(&picture, rgba, (int)width * 4)
                       : WebPPictureImportRGBX(&picture, rgba, (int)width * 4);
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    picture.progress_hook = webp_progress;
    picture.user_data = &deadline;
    if (ok) ok = WebPEncode(&config, &picture);
    int status = THUMBD_OK;
    if (!ok && picture.error_code == VP8_ENC_ERROR_USER_ABORT) {
        status = deadline_passed(message, message_size);
    } else if (!ok) {
        char text[64];
        snprintf(text, sizeof text, "WebP encoding failed (libwebp error %d)", (int)picture.error_code);
        thumbd_set_message(message, message_size, text);
        status = picture.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ? THUMBD_NO_MEMORY : THUMBD_FAILED;
    } else {
        status = hand_over(writer.mem, writer.size, out, out_length, message, message_size);
    }
    WebPPictureFree(&picture);
    WebPMemoryWriterClear(&writer);
    return status;
}

static int avif_failed(avifResult result, char *message, size_t message_size) {
    char text[128];
    snprintf(text, sizeof text, "AVIF encoding failed: %s", avifResultToString(result));
    thumbd_set_message(message, message_size, text);
    return result == AVIF_RESULT_OUT_OF_MEMORY ? THUMBD_NO_MEMORY : THUMBD_FAILED;
}

// Hands "key=value;key=value" to libavif, which passes them to the codec
// when it opens (an unknown key fails the encode there, with the codec's message).
static int set_codec_options(avifEncoder *encoder, const char *options) {
    if (!options || !*options) return 1;
    char *copy = strdup(options), *rest = copy, *pair;
    if (!copy) return 0;
    while ((pair = strtok_r(rest, ";", &rest))) {
        char *equals = strchr(pair, '=');
        if (!equals) continue;
        *equals = 0;
        avifEncoderSetCodecSpecificOption(encoder, pair, equals + 1);
    }
    free(copy);
    return 1;
}

int thumbd_avif_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha,
                       const thumbd_avif_settings *settings, thumbd_deadline deadline,
                       void **out, size_t *out_length, char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    // libavif 0.11 has no progress or cancel hook: once avifEncoderWrite runs,
    // it runs to the end (on a bitmap of at most maxOutputDimension² pixels).
    // Only a deadline already passed stops it.
    if (thumbd_deadline_passed(deadline)) return deadline_passed(message, message_size);
    avifImage *image = avifImageCreate((int)width, (int)height, 8,
                                       settings->yuv444 ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
    avifEncoder *encoder = avifEncoderCreate();
    if (!image || !encoder || !set_codec_options(encoder, settings->options)) {
        if (image) avifImageDestroy(image);
        if (encoder) avifEncoderDestroy(encoder);
        thumbd_set_message(message, message_size, "out of memory");
        return THUMBD_NO_MEMORY;
    }
    // sRGB, written out so that no decoder has to guess (BT.601 matrix, full range).
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.pixels = (uint8_t *)rgba;   // only read
    rgb.rowBytes = width * 4;
    rgb.ignoreAlpha = has_alpha ? AVIF_FALSE : AVIF_TRUE;   // no alpha item for an opaque bitmap
    avifResult result = avifImageRGBToYUV(image, &rgb);
    avifRWData output = AVIF_DATA_EMPTY;
    if (result == AVIF_RESULT_OK) {
        // Never SVT-AV1 (AVIFEncoder.Codec says why).
        encoder->codecChoice = settings->codec == THUMBD_AV1_RAV1E ? AVIF_CODEC_CHOICE_RAV1E : AVIF_CODEC_CHOICE_AOM;
        encoder->maxThreads = 1;
        encoder->speed = settings->speed;
        encoder->minQuantizer = encoder->maxQuantizer = settings->quantizer;
        if (settings->adaptive_quantizer && settings->codec == THUMBD_AV1_AOM) {
            char level[8];
            snprintf(level, sizeof level, "%d", settings->quantizer);
            encoder->minQuantizer = AVIF_QUANTIZER_BEST_QUALITY;
            encoder->maxQuantizer = AVIF_QUANTIZER_WORST_QUALITY;
            avifEncoderSetCodecSpecificOption(encoder, "end-usage", "q");
            avifEncoderSetCodecSpecificOption(encoder, "cq-level", level);
        }
        encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = settings->alpha_quantizer;
        result = avifEncoderWrite(encoder, image, &output);
    }
    int status = result == AVIF_RESULT_OK
        ? hand_over(output.data, output.size, out, out_length, message, message_size)
        : avif_failed(result, message, message_size);
    avifRWDataFree(&output);
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return status;
}
