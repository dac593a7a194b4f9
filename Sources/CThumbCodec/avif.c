#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <avif/avif.h>
#include "avif_swap.h"
#include "decoder.h"
#include "heif_planes.h"
#include "yuv_bands.h"

// AVIF through libavif (AV1 via dav1d, else libgav1 or aom): a third of
// libheif's CPU time on a 12 MP photo and a quarter of its memory, since
// the AV1 planes are converted to RGBA a band at a time (yuv_bands.c).
// libavif reports clap/irot/imir without applying them; they are applied
// as rows are copied out, so the image is upright exactly once and Exif
// orientation is never read (API.md § Output). Which files come here, and
// which go to libheif, the structure walk decides (ISOBMFFLayout): libheif
// takes only files whose images are all HEVC. An embedded thumbnail is
// decoded by libavif too, read as the primary image (avif_swap.c), so
// libheif's dav1d path stays unused.

// libavif's own limits; the caller's pixel limit can only tighten them.
enum { AVIF_SIDE_LIMIT = AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT };
#define AVIF_PIXEL_LIMIT ((uint64_t)AVIF_DEFAULT_IMAGE_SIZE_LIMIT)

static int avif_status(avifResult result, const avifDecoder *decoder, char *message, size_t message_size) {
    if (result == AVIF_RESULT_OK) return THUMBD_OK;
    const char *detail = decoder && decoder->diag.error[0] ? decoder->diag.error : avifResultToString(result);
    thumbd_set_message(message, message_size, detail);
    switch (result) {
    case AVIF_RESULT_OUT_OF_MEMORY:
        return THUMBD_NO_MEMORY;
    case AVIF_RESULT_INVALID_FTYP:
    case AVIF_RESULT_NO_AV1_ITEMS_FOUND:
    case AVIF_RESULT_NO_CODEC_AVAILABLE:
    case AVIF_RESULT_UNSUPPORTED_DEPTH:
    case AVIF_RESULT_NOT_IMPLEMENTED:
        return THUMBD_UNSUPPORTED;
    default:
        // libavif refuses an item over its size limits while parsing, as a
        // parse failure whose message names the size.
        if (strstr(detail, "too large")) return THUMBD_TOO_LARGE;
        return THUMBD_CORRUPT;   // truncated data, bad boxes, AV1 decoding errors
    }
}

// "… dimensions are too large [WxH]"
static void size_from_message(const char *text, thumbd_image_info *info) {
    const char *at = strrchr(text, '[');
    unsigned w = 0, h = 0;
    if (at && sscanf(at, "[%ux%u]", &w, &h) == 2) {
        info->width = w;
        info->height = h;
    }
}

typedef struct {
    avifDecoder *decoder;
    avifCropRect crop;   // clap, or width 0
    int angle, mirror;   // irot (0…3), imir mode (-1 none)
} avif_source;

// Parses the boxes (no AV1 decoding): the primary item, else the first
// track of an image sequence without one; with `thumbnail`, that item read
// as the primary (avif_swap.c), and never a track. The pixel limit is the
// primary's in both cases: libavif applies it to every item's ispe, the
// primary's included, and to dav1d's frame, so a thumbnail whose bitstream
// is larger than its ispe costs at most what a primary may (and then fails
// the size check after decoding).
static int parse(const void *data, size_t length, uint64_t max_pixels, const thumbd_thumbnail *thumbnail,
                 avif_source *source, thumbd_image_info *info, char *message, size_t message_size) {
    memset(source, 0, sizeof *source);
    source->mirror = -1;
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) {
        thumbd_set_message(message, message_size, "out of memory");
        return THUMBD_NO_MEMORY;
    }
    source->decoder = decoder;
    decoder->maxThreads = 1;   // render workers are one per core already
    decoder->strictFlags = AVIF_STRICT_DISABLED;   // as lenient as libheif: pixi, alpha ispe and clap optional
    decoder->ignoreExif = AVIF_TRUE;   // orientation comes from irot/imir only
    decoder->ignoreXMP = AVIF_TRUE;
    uint64_t pixels = max_pixels < AVIF_PIXEL_LIMIT ? max_pixels : AVIF_PIXEL_LIMIT;
    decoder->imageSizeLimit = (uint32_t)(pixels > 0 ? pixels : 1);   // also dav1d's frame size limit
    decoder->imageDimensionLimit = AVIF_SIDE_LIMIT;
    avifResult result = AVIF_RESULT_OK;
    if (thumbnail) {
        avifIO *io = thumbd_avif_swap_reader(data, length, thumbnail);
        if (!io) {
            thumbd_set_message(message, message_size, "AVIF thumbnail cannot be read as the primary image");
            return THUMBD_CORRUPT;
        }
        avifDecoderSetIO(decoder, io);   // the decoder owns it from here
    } else {
        result = avifDecoderSetIOMemory(decoder, data, length);
    }
    if (result == AVIF_RESULT_OK) result = avifDecoderSetSource(decoder, AVIF_DECODER_SOURCE_PRIMARY_ITEM);
    if (result == AVIF_RESULT_OK) result = avifDecoderParse(decoder);
    if (result == AVIF_RESULT_NO_AV1_ITEMS_FOUND && !thumbnail) {
        avifResult tracks = avifDecoderSetSource(decoder, AVIF_DECODER_SOURCE_TRACKS);
        if (tracks == AVIF_RESULT_OK) tracks = avifDecoderParse(decoder);
        if (tracks == AVIF_RESULT_OK || tracks != AVIF_RESULT_NO_AV1_ITEMS_FOUND && tracks != AVIF_RESULT_NO_CONTENT)
            result = tracks;
    }
    int status = avif_status(result, decoder, message, message_size);
    if (status == THUMBD_TOO_LARGE) size_from_message(message, info);
    if (status != THUMBD_OK) return status;

    const avifImage *image = decoder->image;
    uint32_t w = image->width, h = image->height;
    if (image->transformFlags & AVIF_TRANSFORM_CLAP) {
        // Cropped in RGB, so a crop at odd offsets is fine whatever the
        // chroma subsampling: hence 4:4:4 here. A clap box libavif cannot
        // make sense of is ignored, as strictness is off.
        avifCropRect rect;
        avifDiagnostics diag;
        if (avifCropRectConvertCleanApertureBox(&rect, &image->clap, w, h, AVIF_PIXEL_FORMAT_YUV444, &diag)
            && rect.width > 0 && rect.height > 0) {
            source->crop = rect;
            w = rect.width;
            h = rect.height;
        }
    }
    if (image->transformFlags & AVIF_TRANSFORM_IROT) source->angle = image->irot.angle & 3;
    if (image->transformFlags & AVIF_TRANSFORM_IMIR) source->mirror = image->imir.mode & 1;
    if (source->angle & 1) { uint32_t t = w; w = h; h = t; }
    info->width = w;
    info->height = h;
    info->has_alpha = decoder->alphaPresent ? 1 : 0;
    info->bit_depth = image->depth > 0 ? (int32_t)image->depth : 8;
    if ((uint64_t)w * h > max_pixels) return THUMBD_TOO_LARGE;
    if (w == 0 || h == 0) {
        thumbd_set_message(message, message_size, "AVIF primary image has no pixels");
        return THUMBD_CORRUPT;
    }
    return THUMBD_OK;
}

int thumbd_avif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    info->components = 4;
    info->color_model = THUMBD_OTHER;
    info->orientation = 1;
    avif_source source;
    int status = parse(data, length, max_pixels, NULL, &source, info, message, message_size);
    if (source.decoder) avifDecoderDestroy(source.decoder);
    return status;
}

typedef struct {
    avifDecoder *decoder;
    thumbd_yuv_bands bands;
} avif_state;

static void release_avif(thumbd_decoder *d) {
    avif_state *s = d->state;
    if (!s) return;
    thumbd_yuv_bands_free(&s->bands);
    if (s->decoder) avifDecoderDestroy(s->decoder);
    free(s);
}

static int produce_avif(thumbd_decoder *d, uint8_t *rows, uint32_t count, char *message, size_t message_size) {
    avif_state *s = d->state;
    return thumbd_yuv_bands_rows(&s->bands, d->next_row, count, rows, message, message_size);
}

// The colr boxes: an ICC profile copied out, and the CICP codes (from the
// nclx box, else the AV1 sequence header; 2 = unspecified is sRGB to
// nclx.c, like an absent box). The caller prefers a usable ICC profile.
// Returns 0 only when out of memory.
static int read_color(const avifImage *image, thumbd_decoder *d) {
    size_t n = image->icc.size;
    if (n > 0 && n <= THUMBD_ICC_MAX_BYTES) {
        d->profile = malloc(n);
        if (!d->profile) return 0;
        memcpy(d->profile, image->icc.data, n);
        d->profile_length = n;
    }
    d->nclx.primaries = (int)image->colorPrimaries;
    d->nclx.transfer = (int)image->transferCharacteristics;
    return 1;
}

static thumbd_decoder *fail(thumbd_decoder *d, int *status, int code, char *message, size_t message_size,
                            const char *text) {
    *status = code;
    if (text) thumbd_set_message(message, message_size, text);
    thumbd_decoder_close(d);
    return NULL;
}

// A thumbnail that describes no colour of its own has its primary image's:
// the original file parsed (boxes only) for the primary's colr, or CICP
// from its AV1 sequence header.
static int read_primary_color(const void *data, size_t length, uint64_t max_pixels, thumbd_decoder *d) {
    avif_source primary;
    thumbd_image_info info = { 0 };
    char ignored[8];
    int status = parse(data, length, max_pixels, NULL, &primary, &info, ignored, sizeof ignored);
    int read = 1;
    d->nclx = (thumbd_nclx){ 0 };
    if (status == THUMBD_OK) read = read_color(primary.decoder->image, d);
    if (primary.decoder) avifDecoderDestroy(primary.decoder);
    return read;
}

// The primary image, or with `thumbnail` that thumbnail item read as the primary.
static thumbd_decoder *open_image(const void *data, size_t length, uint64_t max_pixels,
                                  const thumbd_thumbnail *thumbnail, uint32_t *out_width, uint32_t *out_height,
                                  int *status, char *message, size_t message_size) {
    thumbd_decoder *d = thumbd_decoder_new(status, message, message_size);
    avif_state *s = d ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(d);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    d->state = s;
    d->release = release_avif;
    thumbd_image_info info = { 0 };
    avif_source source;
    *status = parse(data, length, max_pixels, thumbnail, &source, &info, message, message_size);
    s->decoder = source.decoder;
    if (*status != THUMBD_OK) return fail(d, status, *status, message, message_size, NULL);
    if (thumbnail && (info.width != thumbnail->width || info.height != thumbnail->height))
        return fail(d, status, THUMBD_CORRUPT, message, message_size, "AVIF thumbnail differs from its ispe");

    avifImage *image = s->decoder->image;
    uint32_t stored_width = image->width, stored_height = image->height;
    avifResult result = avifDecoderNextImage(s->decoder);   // the whole AV1 decode; no cancellation hook
    if (result != AVIF_RESULT_OK) {
        int code = avif_status(result, s->decoder, message, message_size);
        return fail(d, status, code == THUMBD_TOO_LARGE ? THUMBD_CORRUPT : code, message, message_size, NULL);
    }
    image = s->decoder->image;
    if (!image->yuvPlanes[AVIF_CHAN_Y] || image->width != stored_width || image->height != stored_height)
        return fail(d, status, THUMBD_CORRUPT, message, message_size, "AVIF decoded image differs from its header");
    if (!thumbd_yuv_bands_init(&s->bands, image, source.crop, source.angle, source.mirror) || !read_color(image, d)
        || (thumbnail && !thumbd_decoder_has_color(d) && !read_primary_color(data, length, max_pixels, d)))
        return fail(d, status, THUMBD_NO_MEMORY, message, message_size, "out of memory");
    if (s->bands.out_width != info.width || s->bands.out_height != info.height)
        return fail(d, status, THUMBD_CORRUPT, message, message_size, "AVIF decoded image differs from its header");
    d->width = info.width;
    d->height = info.height;
    d->produce = produce_avif;
    *out_width = d->width;
    *out_height = d->height;
    *status = THUMBD_OK;
    return d;
}

thumbd_decoder *thumbd_avif_open(const void *data, size_t length, uint64_t max_pixels,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size) {
    return open_image(data, length, max_pixels, NULL, out_width, out_height, status, message, message_size);
}

thumbd_decoder *thumbd_avif_open_thumbnail(const void *data, size_t length, uint64_t max_pixels,
                                           const thumbd_thumbnail *thumbnail, uint32_t *out_width,
                                           uint32_t *out_height, int *status, char *message, size_t message_size) {
    return open_image(data, length, max_pixels, thumbnail, out_width, out_height, status, message, message_size);
}
