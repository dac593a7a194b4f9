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

int thumbd_webp_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, int quality,
                       void **out, size_t *out_length, char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    WebPConfig config;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, (float)quality)) {
        thumbd_set_message(message, message_size, "libwebp version mismatch");
        return THUMBD_FAILED;
    }
    config.alpha_compression = 1;   // alpha plane compressed losslessly…
    config.alpha_quality = 100;     // …and not pre-quantised (README § Output: alpha is lossless)
    config.method = 4;
    WebPPicture picture;
    if (!WebPValidateConfig(&config) || !WebPPictureInit(&picture)) {
        thumbd_set_message(message, message_size, "invalid WebP configuration");
        return THUMBD_FAILED;
    }
    picture.width = (int)width;
    picture.height = (int)height;
    // RGBX drops the alpha byte, so an opaque bitmap gets no ALPH chunk.
    int ok = has_alpha ? WebPPictureImportRGBA(&picture, rgba, (int)width * 4)
                       : WebPPictureImportRGBX(&picture, rgba, (int)width * 4);
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    if (ok) ok = WebPEncode(&config, &picture);
    int status = THUMBD_OK;
    if (!ok) {
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

int thumbd_avif_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, int quantizer,
                       int speed, void **out, size_t *out_length, char *message, size_t message_size) {
    *out = NULL;
    *out_length = 0;
    avifImage *image = avifImageCreate((int)width, (int)height, 8, AVIF_PIXEL_FORMAT_YUV420);
    avifEncoder *encoder = avifEncoderCreate();
    if (!image || !encoder) {
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
        encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
        encoder->maxThreads = 1;
        encoder->speed = speed;
        encoder->minQuantizer = encoder->maxQuantizer = quantizer;
        // Alpha is kept losslessly, as in WebP: a soft edge must not band.
        encoder->minQuantizerAlpha = encoder->maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS;
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
