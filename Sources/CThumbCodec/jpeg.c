#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "thumbd_codec.h"
#include "jpeg_markers.h"
#include "jpeg_source.h"

// libjpeg calls error_exit on fatal errors and must not return from it: we
// longjmp back to the shim function that called into the library.
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int status;
    uint32_t width, height;   // the frame's size, kept for a THUMBD_TOO_LARGE answer
    char message[JMSG_LENGTH_MAX];
} shim_error;

static int classify(int code) {
    switch (code) {
    case JERR_BAD_PRECISION: case JERR_SOF_UNSUPPORTED: case JERR_NOT_COMPILED: case JERR_ARITH_NOTIMPL:
        return THUMBD_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY:
        return THUMBD_NO_MEMORY;
    case JERR_IMAGE_TOO_BIG:     // a side over libjpeg's 65500: the header is fine, the image too large
        return THUMBD_TOO_LARGE;
    default:
        return THUMBD_CORRUPT;
    }
}

static void on_error_exit(j_common_ptr cinfo) {
    shim_error *err = (shim_error *)cinfo->err;
    cinfo->err->format_message(cinfo, err->message);
    err->status = classify(cinfo->err->msg_code);
    if (cinfo->is_decompressor) {
        err->width = ((j_decompress_ptr)cinfo)->image_width;
        err->height = ((j_decompress_ptr)cinfo)->image_height;
    }
    longjmp(err->jump, 1);
}

// API.md § Output: data that ends before the image is complete is corrupt (libjpeg
// would pad it with grey): the entropy decoder running out of data mid-scan
// (JWRN_HIT_MARKER, "premature end of data segment") or the input ending
// while the decoder still needs it. Every other warning is tolerated.
static void on_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0 && (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER)) {
        shim_error *err = (shim_error *)cinfo->err;
        cinfo->err->format_message(cinfo, err->message);
        err->status = THUMBD_CORRUPT;
        longjmp(err->jump, 1);
    }
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void stop(j_common_ptr cinfo, int status, const char *why) {
    shim_error *err = (shim_error *)cinfo->err;
    strcpy(err->message, why);
    err->status = status;
    longjmp(err->jump, 1);
}

// libjpeg calls the progress monitor before each iMCU row of every scan it
// reads (jpeg_start_decompress reads a progressive file's scans here), for
// every jpeg_read_scanlines/jpeg_write_scanlines call and for each row of an
// encoder's optimisation passes: the place to stop a scan bomb (more scans
// than any real file has, each costing a pass over the coefficients, as
// libjpeg-turbo's `djpeg -maxscans` does) and a render past its deadline.
typedef struct {
    struct jpeg_progress_mgr pub;
    thumbd_deadline deadline;
} shim_progress;

static void on_progress(j_common_ptr cinfo) {
    shim_progress *progress = (shim_progress *)cinfo->progress;
    if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > THUMBD_JPEG_MAX_SCANS)
        stop(cinfo, THUMBD_CORRUPT, "progressive JPEG has more than 100 scans");
    if (thumbd_deadline_passed(progress->deadline)) stop(cinfo, THUMBD_DEADLINE, "render deadline passed");
}

static void init_progress(shim_progress *progress, thumbd_deadline deadline) {
    memset(progress, 0, sizeof *progress);
    progress->pub.progress_monitor = on_progress;
    progress->deadline = deadline;
}

static void init_error(shim_error *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = on_error_exit;
    err->pub.emit_message = on_emit_message;
    err->pub.output_message = on_output_message;
    err->status = THUMBD_OK;
    err->message[0] = 0;
}

static void fail(j_decompress_ptr cinfo, const char *why) {
    shim_error *err = (shim_error *)cinfo->err;
    strcpy(err->message, why);
    err->status = THUMBD_CORRUPT;
    longjmp(err->jump, 1);
}

static void copy_message(const char *from, char *to, size_t size) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

static int color_model(J_COLOR_SPACE cs) {
    switch (cs) {
    case JCS_GRAYSCALE: return THUMBD_GRAY;
    case JCS_RGB: return THUMBD_RGB;
    case JCS_YCbCr: return THUMBD_YCC;
    case JCS_CMYK: return THUMBD_CMYK;
    case JCS_YCCK: return THUMBD_YCCK;
    default: return THUMBD_OTHER;
    }
}

int thumbd_jpeg_probe(const void *data, size_t length, thumbd_image_info *info, char *message, size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    shim_error err;
    memset(info, 0, sizeof *info);
    init_error(&err);
    cinfo.err = &err.pub;
    if (setjmp(err.jump)) {
        copy_message(err.message, message, message_size);
        if (err.status == THUMBD_TOO_LARGE) {
            info->width = err.width;
            info->height = err.height;
        }
        jpeg_destroy_decompress(&cinfo);
        return err.status;
    }
    thumbd_jpeg_source src;
    jpeg_create_decompress(&cinfo);
    thumbd_jpeg_source_init(&cinfo, &src, data, length);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&cinfo, TRUE);
    info->width = cinfo.image_width;
    info->height = cinfo.image_height;
    info->components = cinfo.num_components;
    info->color_model = color_model(cinfo.jpeg_color_space);
    info->orientation = thumbd_jpeg_marker_orientation(&cinfo);
    info->progressive = cinfo.progressive_mode ? 1 : 0;
    info->arithmetic = cinfo.arith_code ? 1 : 0;
    info->bit_depth = cinfo.data_precision;
    for (int c = 0; c < cinfo.num_components; c++) {
        if (cinfo.comp_info[c].h_samp_factor > info->max_h_samp) info->max_h_samp = cinfo.comp_info[c].h_samp_factor;
        if (cinfo.comp_info[c].v_samp_factor > info->max_v_samp) info->max_v_samp = cinfo.comp_info[c].v_samp_factor;
    }
    jpeg_destroy_decompress(&cinfo);
    return THUMBD_OK;
}

struct thumbd_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    thumbd_jpeg_source src;
    shim_error err;
    shim_progress progress;
    int cmyk;            // output is CMYK and needs converting to RGBA here
    int inverted;        // Adobe CMYK stores inverted values
    JSAMPARRAY scratch;  // one CMYK row, owned by libjpeg's pool
    JOCTET *icc;         // the joined ICC profile (malloc'd by libjpeg), or NULL
    unsigned int icc_length;
    thumbd_icc *cmyk_profile;   // borrowed: converts CMYK rows instead of the inversion
    int dropping;               // libjpeg reads only plan's spans
    thumbd_scan_plan plan;
};

// Internal: the plan and libjpeg disagreed; decode every scan instead.
enum { RETRY_EVERY_SCAN = -1 };

static thumbd_jpeg_decoder *open_decoder(const void *data, size_t length, int scale_num, thumbd_deadline deadline,
                                         int drop_scans, uint32_t *out_width, uint32_t *out_height,
                                         int *status, char *message, size_t message_size) {
    thumbd_jpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) { *status = THUMBD_NO_MEMORY; copy_message("out of memory", message, message_size); return NULL; }
    init_error(&d->err);
    d->cinfo.err = &d->err.pub;
    if (setjmp(d->err.jump)) {
        *status = d->err.status;
        copy_message(d->err.message, message, message_size);
        thumbd_jpeg_close(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    init_progress(&d->progress, deadline);
    d->cinfo.progress = &d->progress.pub;
    thumbd_jpeg_source_init(&d->cinfo, &d->src, data, length);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_read_header(&d->cinfo, TRUE);
    thumbd_jpeg_read_icc(&d->cinfo, &d->icc, &d->icc_length);
    d->cinfo.scale_num = (unsigned)(scale_num < 1 ? 1 : scale_num > 8 ? 8 : scale_num);
    d->cinfo.scale_denom = 8;
    d->cinfo.dct_method = JDCT_ISLOW;   // djpeg's default; the tests compare against it
    if (d->cinfo.jpeg_color_space == JCS_CMYK || d->cinfo.jpeg_color_space == JCS_YCCK) {
        d->cinfo.out_color_space = JCS_CMYK;   // libjpeg turns YCCK into CMYK
        d->cmyk = 1;
        d->inverted = d->cinfo.saw_Adobe_marker;
    } else {
        d->cinfo.out_color_space = JCS_EXT_RGBA;
    }
    if (drop_scans) d->dropping = thumbd_jpeg_drop_scans(&d->cinfo, &d->src, &d->plan, data, length);
    jpeg_start_decompress(&d->cinfo);   // a progressive file is read whole here
    if (d->dropping && !thumbd_jpeg_plan_held(&d->cinfo, &d->plan))
        stop((j_common_ptr)&d->cinfo, RETRY_EVERY_SCAN, "scan plan disagreed");
    // The plan has checked that every coefficient gets all its bits, dropped scans included.
    if ((!d->dropping && !thumbd_jpeg_progressive_complete(&d->cinfo)) || thumbd_jpeg_ran_out_mid_scan(&d->cinfo))
        fail(&d->cinfo, "Premature end of JPEG file (truncated)");
    if (d->cmyk)
        d->scratch = (*d->cinfo.mem->alloc_sarray)((j_common_ptr)&d->cinfo, JPOOL_IMAGE, d->cinfo.output_width * 4, 1);
    *out_width = d->cinfo.output_width;
    *out_height = d->cinfo.output_height;
    *status = THUMBD_OK;
    return d;
}

thumbd_jpeg_decoder *thumbd_jpeg_open(const void *data, size_t length, int scale_num, thumbd_deadline deadline,
                                      uint32_t *out_width, uint32_t *out_height,
                                      int *status, char *message, size_t message_size) {
    thumbd_jpeg_decoder *d = open_decoder(data, length, scale_num, deadline, 1, out_width, out_height,
                                          status, message, message_size);
    if (!d && *status == RETRY_EVERY_SCAN)
        d = open_decoder(data, length, scale_num, deadline, 0, out_width, out_height, status, message, message_size);
    return d;
}

thumbd_jpeg_decoder *thumbd_jpeg_open_every_scan(const void *data, size_t length, int scale_num, thumbd_deadline deadline,
                                                 uint32_t *out_width, uint32_t *out_height,
                                                 int *status, char *message, size_t message_size) {
    return open_decoder(data, length, scale_num, deadline, 0, out_width, out_height, status, message, message_size);
}

void thumbd_jpeg_scan_counts(const thumbd_jpeg_decoder *d, int *decoded, int *in_file) {
    *decoded = d->cinfo.input_scan_number;
    *in_file = d->dropping ? d->plan.scans : d->cinfo.input_scan_number;
}

static void cmyk_to_rgba(const JSAMPLE *in, uint8_t *out, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++, in += 4, out += 4) {
        unsigned c = in[0], m = in[1], y = in[2], k = in[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        // Adobe inverted: R = C·K/255 on the stored values (API.md § Output).
        out[0] = (uint8_t)((c * k + 127) / 255);
        out[1] = (uint8_t)((m * k + 127) / 255);
        out[2] = (uint8_t)((y * k + 127) / 255);
        out[3] = 255;
    }
}

int thumbd_jpeg_read(thumbd_jpeg_decoder *d, void *rows, uint32_t max_rows, uint32_t *rows_read,
                     char *message, size_t message_size) {
    *rows_read = 0;
    if (setjmp(d->err.jump)) {
        copy_message(d->err.message, message, message_size);
        return d->err.status;
    }
    uint8_t *out = rows;
    size_t stride = (size_t)d->cinfo.output_width * 4;
    uint32_t n = 0;
    while (n < max_rows && d->cinfo.output_scanline < d->cinfo.output_height) {
        if (d->cmyk) {
            if (jpeg_read_scanlines(&d->cinfo, d->scratch, 1) == 1) {
                if (d->cmyk_profile)
                    thumbd_icc_convert_cmyk(d->cmyk_profile, d->scratch[0], out + n * stride, d->cinfo.output_width);
                else
                    cmyk_to_rgba(d->scratch[0], out + n * stride, d->cinfo.output_width, d->inverted);
                n++;
            }
        } else {
            JSAMPROW batch[16];
            uint32_t want = max_rows - n < 16 ? max_rows - n : 16;
            for (uint32_t i = 0; i < want; i++) batch[i] = out + (n + i) * stride;
            n += jpeg_read_scanlines(&d->cinfo, batch, want);
        }
        if (thumbd_jpeg_ran_out_mid_scan(&d->cinfo)) fail(&d->cinfo, "Premature end of JPEG file (truncated)");
    }
    *rows_read = n;
    return THUMBD_OK;
}

void thumbd_jpeg_close(thumbd_jpeg_decoder *d) {
    if (!d) return;
    jpeg_destroy_decompress(&d->cinfo);   // safe at any stage, also after an error
    free(d->icc);
    free(d);
}

void thumbd_jpeg_color(const thumbd_jpeg_decoder *d, const void **profile, size_t *length,
                       int *model, int *cmyk_inverted) {
    *profile = d->icc;
    *length = d->icc ? d->icc_length : 0;
    switch (d->cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE: *model = THUMBD_GRAY; break;
    case JCS_RGB: case JCS_YCbCr: *model = THUMBD_RGB; break;
    case JCS_CMYK: case JCS_YCCK: *model = THUMBD_CMYK; break;
    default: *model = 0;
    }
    *cmyk_inverted = d->inverted;
}

void thumbd_jpeg_use_cmyk_profile(thumbd_jpeg_decoder *d, thumbd_icc *icc) {
    if (d->cmyk) d->cmyk_profile = icc;
}

// N. Robidoux's table (ImageMagick's "Robidoux" quantization tables, MozJPEG's
// default set 3), natural order, for luminance and chrominance alike.
static const unsigned int robidoux_table[64] = {
    16, 16, 16, 18, 25, 37, 56, 85,
    16, 17, 20, 27, 34, 40, 53, 75,
    16, 20, 24, 31, 43, 62, 91, 135,
    18, 27, 31, 40, 53, 74, 106, 156,
    25, 34, 43, 53, 69, 94, 131, 189,
    37, 40, 62, 74, 94, 124, 169, 238,
    56, 53, 91, 106, 131, 169, 226, 311,
    85, 75, 135, 156, 189, 238, 311, 418,
};

int thumbd_jpeg_encode(const void *rgba, uint32_t width, uint32_t height, const thumbd_jpeg_settings *settings,
                       thumbd_deadline deadline, void **out, size_t *out_length, char *message, size_t message_size) {
    const int quality = settings->quality < 1 ? 1 : settings->quality > 100 ? 100 : settings->quality;
    struct jpeg_compress_struct cinfo;
    shim_error err;
    shim_progress progress;
    // jpeg_mem_dest writes its buffer pointer here; it lives in memory, not a
    // register, so it is still valid after a longjmp.
    struct { unsigned char *buffer; unsigned long size; } *mem = calloc(1, sizeof *mem);
    *out = NULL;
    *out_length = 0;
    if (!mem) { copy_message("out of memory", message, message_size); return THUMBD_NO_MEMORY; }
    init_error(&err);
    cinfo.err = &err.pub;
    if (setjmp(err.jump)) {
        copy_message(err.message, message, message_size);
        jpeg_destroy_compress(&cinfo);
        free(mem->buffer);
        free(mem);
        return err.status == THUMBD_DEADLINE ? THUMBD_DEADLINE : THUMBD_FAILED;
    }
    jpeg_create_compress(&cinfo);
    init_progress(&progress, deadline);
    cinfo.progress = &progress.pub;
    jpeg_mem_dest(&cinfo, &mem->buffer, &mem->size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&cinfo);          // YCbCr 4:2:0, JFIF header, baseline
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (settings->table == THUMBD_JPEG_TABLE_ROBIDOUX) {
        const int scale = jpeg_quality_scaling(quality);
        jpeg_add_quant_table(&cinfo, 0, robidoux_table, scale, TRUE);
        jpeg_add_quant_table(&cinfo, 1, robidoux_table, scale, TRUE);
    }
    if (settings->yuv444) {
        cinfo.comp_info[0].h_samp_factor = cinfo.comp_info[0].v_samp_factor = 1;
    }
    if (settings->progressive) jpeg_simple_progression(&cinfo);
    cinfo.optimize_coding = TRUE;       // smaller files for a negligible cost at thumbnail sizes
    jpeg_start_compress(&cinfo, TRUE);
    const uint8_t *src = rgba;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(src + (size_t)cinfo.next_scanline * width * 4);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = mem->buffer;
    *out_length = mem->size;
    free(mem);
    return THUMBD_OK;
}

void thumbd_free(void *buffer) { free(buffer); }
