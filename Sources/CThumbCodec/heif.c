#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libheif/heif.h>
#include "decoder.h"
#include "heif_planes.h"
#include "yuv_bands.h"

// HEIC through libheif (HEVC via libde265): only files whose images are all
// HEVC, as the structure walk decides (ISOBMFFLayout); the rest go to
// libavif. libheif's own dav1d path leaks its input when dav1d refuses a
// sample (libheif 1.15's decoder_dav1d.cc frees the data only while bytes
// are left; an empty AV1 item, found by the codec fuzzer), so it must never
// see AV1. libheif applies irot/imir/clap when decoding; Exif orientation is
// never read, so the image is upright exactly once (API.md § Output).
// libheif returns errors by value. The decoded YCbCr planes are converted to
// RGBA a band of rows at a time (yuv_bands.c) rather than by libheif into a
// whole RGBA image: 52 MB less at the peak for 12 MP. A render may decode one
// of the primary's thumbnail items instead (thumbd_heif_open_thumbnail), which
// libheif lists and decodes with its own transforms and alpha.

// libheif's own default per-side limit; the caller's pixel limit can only tighten it.
enum { HEIF_SIDE_LIMIT = 32768 };

static pthread_once_t heif_once = PTHREAD_ONCE_INIT;
static void heif_start(void) { heif_init(NULL); }   // registers the built-in codecs; never undone

void thumbd_heif_start(void) { pthread_once(&heif_once, heif_start); }

static int heif_status(struct heif_error error, char *message, size_t message_size) {
    if (error.code == heif_error_Ok) return THUMBD_OK;
    thumbd_set_message(message, message_size, error.message ? error.message : "HEIF decoding failed");
    switch (error.code) {
    case heif_error_Unsupported_filetype:
    case heif_error_Unsupported_feature:
        return THUMBD_UNSUPPORTED;
    case heif_error_Memory_allocation_error:
        return error.subcode == heif_suberror_Security_limit_exceeded ? THUMBD_TOO_LARGE : THUMBD_NO_MEMORY;
    default:
        return THUMBD_CORRUPT;   // invalid input, truncated data, codec errors
    }
}

// libheif refuses an item whose side exceeds the limit while parsing; its
// message names the size ("Image size WxH exceeds …"), which the error reports.
static void size_from_message(const char *text, thumbd_image_info *info) {
    const char *at = text ? strstr(text, "Image size ") : NULL;
    unsigned w = 0, h = 0;
    if (at && sscanf(at, "Image size %ux%u", &w, &h) == 2) {
        info->width = w;
        info->height = h;
    }
}

// Reads the file's boxes. libheif's error messages live in the context, so
// they are copied out before it is freed. The probe and the decode each read
// them (no context is kept while a render waits for admission): libheif finds
// items by linear look-ups, a parse quadratic in the items, but after the
// structure walk's limits (ISOBMFFLimits: 2 048 items) one costs at most
// 0.13 s of CPU, and under a millisecond for real files (measured: a 32×32
// grid with 1 023 more items; 12 s for the 19 881 items of issue 19).
static struct heif_context *read_context(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                         int *status,
                                         thumbd_image_info *info, char *message, size_t message_size) {
    pthread_once(&heif_once, heif_start);
    struct heif_context *ctx = heif_context_alloc();
    if (!ctx) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    int limit = max_pixels < HEIF_SIDE_LIMIT ? (int)(max_pixels > 0 ? max_pixels : 1) : HEIF_SIDE_LIMIT;
    heif_context_set_maximum_image_size_limit(ctx, limit);
    // Grid tiles on the calling (render) thread, or on as many threads as the
    // job was given (idle workers' share, counted in its admission; clone with
    // glibc's thread flags is what the worker's filter allows).
    if (tile_threads > THUMBD_HEIF_MAX_TILE_THREADS) tile_threads = THUMBD_HEIF_MAX_TILE_THREADS;
    heif_context_set_max_decoding_threads(ctx, tile_threads > 1 ? tile_threads : 0);
    struct heif_error error = heif_context_read_from_memory_without_copy(ctx, data, length, NULL);
    *status = heif_status(error, message, message_size);
    if (*status != THUMBD_OK) {
        if (*status == THUMBD_TOO_LARGE) size_from_message(error.message, info);
        heif_context_free(ctx);
        return NULL;
    }
    return ctx;
}

// The primary image's size (after transformations), or an error.
static int open_primary(const void *data, size_t length, uint64_t max_pixels, int tile_threads, struct heif_context **ctx,
                        struct heif_image_handle **handle, thumbd_image_info *info,
                        char *message, size_t message_size) {
    int status;
    *handle = NULL;
    *ctx = read_context(data, length, max_pixels, tile_threads, &status, info, message, message_size);
    if (!*ctx) return status;
    struct heif_error error = heif_context_get_primary_image_handle(*ctx, handle);
    if (error.code != heif_error_Ok) {
        *handle = NULL;
        return heif_status(error, message, message_size);
    }
    int w = heif_image_handle_get_width(*handle), h = heif_image_handle_get_height(*handle);
    info->width = w > 0 ? (uint32_t)w : 0;
    info->height = h > 0 ? (uint32_t)h : 0;
    if ((uint64_t)info->width * info->height > max_pixels) return THUMBD_TOO_LARGE;
    if (w <= 0 || h <= 0) {
        thumbd_set_message(message, message_size, "HEIF primary image has no pixels");
        return THUMBD_CORRUPT;
    }
    return THUMBD_OK;
}

static void close_primary(struct heif_context *ctx, struct heif_image_handle *handle) {
    if (handle) heif_image_handle_release(handle);
    if (ctx) heif_context_free(ctx);
}

int thumbd_heif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    info->components = 4;
    info->color_model = THUMBD_OTHER;
    info->orientation = 1;
    struct heif_context *ctx;
    struct heif_image_handle *handle;
    int status = open_primary(data, length, max_pixels, 0, &ctx, &handle, info, message, message_size);
    if (status == THUMBD_OK) {
        info->has_alpha = heif_image_handle_has_alpha_channel(handle) ? 1 : 0;
        int bits = heif_image_handle_get_luma_bits_per_pixel(handle);
        info->bit_depth = bits > 0 ? bits : 8;
    }
    close_primary(ctx, handle);
    return status;
}

typedef struct {
    struct heif_context *ctx;
    struct heif_image_handle *handle;      // the primary image
    struct heif_image_handle *thumbnail;   // the thumbnail decoded instead, or NULL
    struct heif_image *image;
    avifImage *planes;   // image's YCbCr planes, borrowed, when converted in bands
    thumbd_yuv_bands bands;
} heif_state;

static void release_heif(thumbd_decoder *d) {
    heif_state *s = d->state;
    if (!s) return;
    thumbd_yuv_bands_free(&s->bands);
    if (s->planes) avifImageDestroy(s->planes);   // frees no plane: it owns none
    if (s->image) heif_image_release(s->image);
    if (s->thumbnail) heif_image_handle_release(s->thumbnail);
    close_primary(s->ctx, s->handle);
    free(s);
}

static int produce_heif(thumbd_decoder *d, uint8_t *rows, uint32_t count, char *message, size_t message_size) {
    heif_state *s = d->state;
    return thumbd_yuv_bands_rows(&s->bands, d->next_row, count, rows, message, message_size);
}

// Straight alpha is what the sinks take; libheif leaves premultiplied images so.
static void unpremultiply(uint8_t *p, int stride, uint32_t width, uint32_t height) {
    for (uint32_t y = 0; y < height; y++, p += stride)
        for (uint32_t x = 0; x < width; x++) {
            uint8_t *px = p + x * 4;
            unsigned a = px[3];
            if (a == 0 || a == 255) continue;
            for (int c = 0; c < 3; c++) {
                unsigned v = (px[c] * 255u + a / 2) / a;
                px[c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
}

// The colr boxes: an ICC profile (prof or rICC) copied out, and the nclx
// codes. A file may carry both; the caller prefers a usable ICC profile.
// Returns 0 only when out of memory.
static int read_color(struct heif_image_handle *handle, thumbd_decoder *d) {
    size_t n = heif_image_handle_get_raw_color_profile_size(handle);
    if (n > 0 && n <= THUMBD_ICC_MAX_BYTES) {
        d->profile = malloc(n);
        if (!d->profile) return 0;
        if (heif_image_handle_get_raw_color_profile(handle, d->profile).code == heif_error_Ok) {
            d->profile_length = n;
        } else {
            free(d->profile);
            d->profile = NULL;
        }
    }
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        d->nclx.primaries = (int)nclx->color_primaries;
        d->nclx.transfer = (int)nclx->transfer_characteristics;
    }
    if (nclx) heif_nclx_color_profile_free(nclx);
    return 1;
}

// The thumbnail item libheif lists for the primary image, which must have
// the size the structure walk found (its ispe after its irot): its handle in
// s->thumbnail, its size in *info.
static int open_thumbnail(heif_state *s, const thumbd_thumbnail *thumbnail, thumbd_image_info *info,
                          char *message, size_t message_size) {
    struct heif_error error = heif_image_handle_get_thumbnail(s->handle, thumbnail->item, &s->thumbnail);
    if (error.code != heif_error_Ok) {
        s->thumbnail = NULL;
        return heif_status(error, message, message_size);
    }
    int w = heif_image_handle_get_width(s->thumbnail), h = heif_image_handle_get_height(s->thumbnail);
    if (w != (int)thumbnail->width || h != (int)thumbnail->height) {
        thumbd_set_message(message, message_size, "HEIF thumbnail differs from its ispe");
        return THUMBD_CORRUPT;
    }
    info->width = (uint32_t)w;
    info->height = (uint32_t)h;
    return THUMBD_OK;
}

// The primary image, or with `thumbnail` that thumbnail item of it.
static thumbd_decoder *open_image(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                  const thumbd_thumbnail *thumbnail, uint32_t *out_width, uint32_t *out_height,
                                  int *status, char *message, size_t message_size) {
    thumbd_decoder *d = thumbd_decoder_new(status, message, message_size);
    heif_state *s = d ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(d);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    d->state = s;
    d->release = release_heif;
    thumbd_image_info info = { 0 };
    *status = open_primary(data, length, max_pixels, tile_threads, &s->ctx, &s->handle, &info, message, message_size);
    if (*status == THUMBD_OK && thumbnail) *status = open_thumbnail(s, thumbnail, &info, message, message_size);
    if (*status != THUMBD_OK) { thumbd_decoder_close(d); return NULL; }
    struct heif_image_handle *decoded = s->thumbnail ? s->thumbnail : s->handle;

    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        thumbd_decoder_close(d);
        return NULL;
    }
    // The codec's own layout, so libheif converts nothing (its "undefined"
    // would mean planar RGB).
    enum heif_chroma chroma = thumbd_heif_native_chroma(data, length);
    struct heif_error error = heif_decode_image(decoded, &s->image,
                                                chroma == heif_chroma_monochrome ? heif_colorspace_monochrome
                                                                                 : heif_colorspace_YCbCr,
                                                chroma, options);
    s->planes = error.code == heif_error_Ok ? thumbd_heif_borrow_planes(s->image) : NULL;
    if (error.code == heif_error_Ok && !s->planes) {
        // A layout the band converter does not take: libheif's RGBA, whole.
        heif_image_release(s->image);
        s->image = NULL;
        options->convert_hdr_to_8bit = 1;   // 10/12-bit sources → 8-bit RGBA
        error = heif_decode_image(decoded, &s->image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options);
    }
    heif_decoding_options_free(options);
    if (error.code != heif_error_Ok) {
        *status = heif_status(error, message, message_size);
        if (*status == THUMBD_TOO_LARGE) *status = THUMBD_CORRUPT;   // an item the probe did not see
        thumbd_decoder_close(d);
        return NULL;
    }
    int stride = 0, w, h;
    uint8_t *pixels = NULL;
    if (s->planes) {
        w = (int)s->planes->width;
        h = (int)s->planes->height;
        if (!thumbd_yuv_bands_init(&s->bands, s->planes, (avifCropRect){ 0, 0, 0, 0 }, 0, -1)) {
            *status = THUMBD_NO_MEMORY;
            thumbd_set_message(message, message_size, "out of memory");
            thumbd_decoder_close(d);
            return NULL;
        }
        // As libheif 1.15 converts: chroma repeated, full-precision
        // arithmetic (libyuv's is up to 6 levels off on saturated colour).
        s->bands.upsampling = AVIF_CHROMA_UPSAMPLING_NEAREST;
        s->bands.precise = AVIF_TRUE;
    } else {
        pixels = heif_image_get_plane(s->image, heif_channel_interleaved, &stride);
        w = heif_image_get_width(s->image, heif_channel_interleaved);
        h = heif_image_get_height(s->image, heif_channel_interleaved);
        if (!pixels || stride < w * 4 || heif_image_get_bits_per_pixel_range(s->image, heif_channel_interleaved) != 8)
            w = -1;
    }
    if (w != (int)info.width || h != (int)info.height) {
        *status = THUMBD_CORRUPT;
        thumbd_set_message(message, message_size, "HEIF decoded image differs from its header");
        thumbd_decoder_close(d);
        return NULL;
    }
    int color_read = read_color(decoded, d);
    if (color_read && s->thumbnail && !thumbd_decoder_has_color(d)) {
        // A thumbnail that describes no colour of its own has its primary image's.
        d->nclx = (thumbd_nclx){ 0 };
        color_read = read_color(s->handle, d);
    }
    if (!color_read) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory for the HEIF colour profile");
        thumbd_decoder_close(d);
        return NULL;
    }
    if (pixels && heif_image_is_premultiplied_alpha(s->image)) unpremultiply(pixels, stride, (uint32_t)w, (uint32_t)h);
    d->width = (uint32_t)w;
    d->height = (uint32_t)h;
    if (s->planes) {
        d->produce = produce_heif;
    } else {
        d->pixels = pixels;
        d->stride = (size_t)stride;
    }
    *out_width = d->width;
    *out_height = d->height;
    *status = THUMBD_OK;
    return d;
}

thumbd_decoder *thumbd_heif_open(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size) {
    return open_image(data, length, max_pixels, tile_threads, NULL, out_width, out_height, status, message, message_size);
}

thumbd_decoder *thumbd_heif_open_thumbnail(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                           const thumbd_thumbnail *thumbnail, uint32_t *out_width,
                                           uint32_t *out_height, int *status, char *message, size_t message_size) {
    return open_image(data, length, max_pixels, tile_threads, thumbnail, out_width, out_height, status, message, message_size);
}
