#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include "decoder.h"
#include "webp_common.h"

static int webp_status(VP8StatusCode code, char *message, size_t message_size) {
    switch (code) {
    case VP8_STATUS_OK: return THUMBD_OK;
    case VP8_STATUS_OUT_OF_MEMORY:
        thumbd_set_message(message, message_size, "out of memory decoding WebP");
        return THUMBD_NO_MEMORY;
    case VP8_STATUS_UNSUPPORTED_FEATURE:
        thumbd_set_message(message, message_size, "WebP uses a feature libwebp does not support");
        return THUMBD_UNSUPPORTED;
    case VP8_STATUS_NOT_ENOUGH_DATA:
        thumbd_set_message(message, message_size, "WebP data ends early (truncated)");
        return THUMBD_CORRUPT;
    case VP8_STATUS_BITSTREAM_ERROR:
        thumbd_set_message(message, message_size, "WebP bitstream error");
        return THUMBD_CORRUPT;
    default:
        thumbd_set_message(message, message_size, "WebP decoding failed");
        return THUMBD_CORRUPT;
    }
}

static int corrupt(const char *why, char *message, size_t message_size) {
    thumbd_set_message(message, message_size, why);
    return THUMBD_CORRUPT;
}

// The EXIF chunk holds a TIFF structure; some writers keep JPEG's "Exif\0\0" prefix.
static int exif_orientation(WebPDemuxer *demux) {
    WebPChunkIterator chunk;
    int orientation = 1;
    if (WebPDemuxGetChunk(demux, "EXIF", 1, &chunk)) {
        const uint8_t *p = chunk.chunk.bytes;
        size_t n = chunk.chunk.size;
        if (n >= 6 && memcmp(p, "Exif\0\0", 6) == 0) { p += 6; n -= 6; }
        orientation = thumbd_exif_orientation(p, n);
        WebPDemuxReleaseChunkIterator(&chunk);
    }
    return orientation;
}

int thumbd_webp_copy_profile(const WebPDemuxer *demux, uint8_t **profile, size_t *length) {
    WebPChunkIterator chunk;
    if (!WebPDemuxGetChunk(demux, "ICCP", 1, &chunk)) return 1;
    size_t n = chunk.chunk.size;
    if (n > 0 && n <= THUMBD_ICC_MAX_BYTES) {
        *profile = malloc(n);
        if (*profile) {
            memcpy(*profile, chunk.chunk.bytes, n);
            *length = n;
        }
    }
    WebPDemuxReleaseChunkIterator(&chunk);
    return *profile != NULL || n == 0 || n > THUMBD_ICC_MAX_BYTES;
}

// The whole container is parsed (a truncated one is refused here), and the
// first frame must lie inside the canvas and match its own bitstream's size.
static int open_demux(const void *data, size_t length, WebPDemuxer **demux, WebPIterator *frame,
                      WebPBitstreamFeatures *frame_features, char *message, size_t message_size) {
    WebPData bytes = { data, length };
    WebPDemuxState state;
    *demux = WebPDemuxPartial(&bytes, &state);
    if (!*demux || state != WEBP_DEMUX_DONE) {
        WebPDemuxDelete(*demux);
        *demux = NULL;
        return corrupt(state == WEBP_DEMUX_PARSE_ERROR ? "invalid WebP container" : "WebP data ends early (truncated)",
                       message, message_size);
    }
    if (!WebPDemuxGetFrame(*demux, 1, frame)) {
        WebPDemuxDelete(*demux);
        *demux = NULL;
        return corrupt("WebP has no image frame", message, message_size);
    }
    uint32_t cw = WebPDemuxGetI(*demux, WEBP_FF_CANVAS_WIDTH), ch = WebPDemuxGetI(*demux, WEBP_FF_CANVAS_HEIGHT);
    int status = webp_status(WebPGetFeatures(frame->fragment.bytes, frame->fragment.size, frame_features),
                             message, message_size);
    if (status == THUMBD_OK && (frame_features->width != frame->width || frame_features->height != frame->height
                                || frame->x_offset < 0 || frame->y_offset < 0
                                || (uint64_t)frame->x_offset + (uint64_t)frame->width > cw
                                || (uint64_t)frame->y_offset + (uint64_t)frame->height > ch))
        status = corrupt("WebP frame does not fit its canvas", message, message_size);
    if (status != THUMBD_OK) {
        WebPDemuxReleaseIterator(frame);
        WebPDemuxDelete(*demux);
        *demux = NULL;
    }
    return status;
}

int thumbd_webp_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    // libwebp calls a canvas of 2^32 pixels or more a bitstream error; read the
    // VP8X canvas here first so that any oversized canvas is "too large".
    const uint8_t *p = data;
    if (length >= 30 && memcmp(p + 12, "VP8X", 4) == 0) {
        info->width = 1 + ((uint32_t)p[24] | (uint32_t)p[25] << 8 | (uint32_t)p[26] << 16);
        info->height = 1 + ((uint32_t)p[27] | (uint32_t)p[28] << 8 | (uint32_t)p[29] << 16);
        if ((uint64_t)info->width * info->height > max_pixels) return THUMBD_TOO_LARGE;
    }
    WebPBitstreamFeatures features;
    int status = webp_status(WebPGetFeatures(data, length, &features), message, message_size);
    if (status != THUMBD_OK) return status;
    // For an animation, or any VP8X file, this is the canvas size.
    info->width = (uint32_t)features.width;
    info->height = (uint32_t)features.height;
    info->components = 4;
    info->color_model = THUMBD_RGB;
    info->orientation = 1;
    info->bit_depth = 8;
    if ((uint64_t)info->width * info->height > max_pixels) return THUMBD_TOO_LARGE;

    WebPDemuxer *demux;
    WebPIterator frame;
    WebPBitstreamFeatures first;
    status = open_demux(data, length, &demux, &frame, &first, message, message_size);
    if (status != THUMBD_OK) return status;
    info->animated = features.has_animation ? 1 : 0;
    info->lossless = first.format == 2;
    // An animation's canvas is transparent wherever its first frame is not.
    info->has_alpha = first.has_alpha || frame.width != features.width || frame.height != features.height;
    info->orientation = exif_orientation(demux);
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    return THUMBD_OK;
}

static void release_pixels(thumbd_decoder *d) { free(d->state); }

// A lossless frame whose header says it has no alpha (the VP8L header's
// alpha_is_used bit, which WebPGetFeatures reports over a VP8X flag) is
// opaque: libwebp's VP8L decoder still writes the alpha values the pixels
// were coded with (libwebp-test-data's bad_palette_index.webp has 0 in a
// quarter of them), while dwebp, browsers and Pillow read such a file as RGB.
static void make_opaque(uint8_t *rgba, size_t stride, uint32_t width, uint32_t height) {
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *alpha = rgba + (size_t)y * stride + 3;
        for (uint32_t x = 0; x < width; x++) alpha[(size_t)x * 4] = 255;
    }
}

thumbd_decoder *thumbd_webp_open(const void *data, size_t length, int scale_num,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size) {
    WebPDemuxer *demux;
    WebPIterator frame;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        *status = THUMBD_FAILED;
        thumbd_set_message(message, message_size, "libwebp version mismatch");
        return NULL;
    }
    *status = open_demux(data, length, &demux, &frame, &config.input, message, message_size);
    if (*status != THUMBD_OK) return NULL;
    uint32_t cw = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH), ch = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
    int animated = (WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & ANIMATION_FLAG) != 0;
    uint32_t width = cw, height = ch;
    // Shrink on load only for still opaque images: libwebp's rescaler does not
    // premultiply the colour of lossy images with alpha, which would leave
    // dark fringes around transparent edges (API.md § Output).
    if (!animated && !config.input.has_alpha && scale_num >= 1 && scale_num < 8) {
        width = (cw * (uint32_t)scale_num + 7) / 8;
        height = (ch * (uint32_t)scale_num + 7) / 8;
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)width;
        config.options.scaled_height = (int)height;
    }
    thumbd_decoder *d = thumbd_decoder_new(status, message, message_size);
    uint8_t *canvas = d ? calloc((size_t)width * height, 4) : NULL;
    if (!canvas) {
        free(d);
        WebPDemuxReleaseIterator(&frame);
        WebPDemuxDelete(demux);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory for the WebP canvas");
        return NULL;
    }
    // The first frame goes straight onto the transparent canvas: blending onto
    // transparency changes nothing visible, and WebPAnimDecoder does the same.
    size_t stride = (size_t)width * 4;
    size_t offset = animated ? (size_t)frame.y_offset * stride + (size_t)frame.x_offset * 4 : 0;
    uint32_t frame_width = animated ? (uint32_t)frame.width : width;
    uint32_t frame_height = animated ? (uint32_t)frame.height : height;
    config.output.colorspace = MODE_RGBA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = canvas + offset;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = stride * (frame_height - 1) + (size_t)frame_width * 4;
    *status = webp_status(WebPDecode(frame.fragment.bytes, frame.fragment.size, &config), message, message_size);
    if (*status == THUMBD_OK && !config.input.has_alpha && config.input.format == 2)
        make_opaque(canvas + offset, stride, frame_width, frame_height);
    if (*status == THUMBD_OK && !thumbd_webp_copy_profile(demux, &d->profile, &d->profile_length)) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory for the WebP colour profile");
    }
    WebPFreeDecBuffer(&config.output);
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    if (*status != THUMBD_OK) {
        free(canvas);
        free(d->profile);
        free(d);
        return NULL;
    }
    d->width = width;
    d->height = height;
    d->pixels = canvas;
    d->stride = stride;
    d->state = canvas;
    d->release = release_pixels;
    *out_width = width;
    *out_height = height;
    return d;
}
