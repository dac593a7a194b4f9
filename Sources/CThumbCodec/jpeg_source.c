// What libjpeg reads (jpeg_source.h): the file from memory, or only the
// byte spans of the scans a scaled decode needs.
#include <string.h>
#include "jpeg_source.h"

static const JOCTET fake_eoi[2] = { 0xFF, JPEG_EOI };
static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }
static boolean src_fill(j_decompress_ptr cinfo) {
    thumbd_jpeg_source *src = (thumbd_jpeg_source *)cinfo->src;
    while (src->spans && src->next_span < src->span_count) {
        const thumbd_byte_span *span = &src->spans[src->next_span++];
        if (span->end > span->start) {
            src->pub.next_input_byte = src->base + span->start;
            src->pub.bytes_in_buffer = span->end - span->start;
            return TRUE;
        }
    }
    if (!src->ran_out) {
        src->ran_out = 1;
        src->ran_out_at_row = cinfo->input_iMCU_row;
    }
    cinfo->src->next_input_byte = fake_eoi;
    cinfo->src->bytes_in_buffer = 2;
    return TRUE;
}

static void src_skip(j_decompress_ptr cinfo, long count) {
    thumbd_jpeg_source *src = (thumbd_jpeg_source *)cinfo->src;
    if (count <= 0) return;
    // Spans never split a marker segment, but a segment cut by the end of the
    // data is skipped into the fake EOI, as by jpeg_mem_src.
    while ((size_t)count > src->pub.bytes_in_buffer) {
        if (src->ran_out || !src->spans || src->next_span >= src->span_count) { src_fill(cinfo); return; }
        count -= (long)src->pub.bytes_in_buffer;
        src_fill(cinfo);
    }
    src->pub.next_input_byte += count;
    src->pub.bytes_in_buffer -= (size_t)count;
}
static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }

void thumbd_jpeg_source_init(j_decompress_ptr cinfo, thumbd_jpeg_source *src, const void *data, size_t length) {
    memset(src, 0, sizeof *src);
    src->pub.init_source = src_init;
    src->pub.fill_input_buffer = src_fill;
    src->pub.skip_input_data = src_skip;
    src->pub.resync_to_restart = jpeg_resync_to_restart;
    src->pub.term_source = src_term;
    src->pub.next_input_byte = data;
    src->pub.bytes_in_buffer = length;
    src->base = data;
    cinfo->src = &src->pub;
}

int thumbd_jpeg_ran_out_mid_scan(j_decompress_ptr cinfo) {
    thumbd_jpeg_source *src = (thumbd_jpeg_source *)cinfo->src;
    return src->ran_out && src->ran_out_at_row + 1 < cinfo->total_iMCU_rows;
}

int thumbd_jpeg_progressive_complete(j_decompress_ptr cinfo) {
    if (!cinfo->progressive_mode || !cinfo->coef_bits) return 1;
    for (int c = 0; c < cinfo->num_components; c++)
        for (int k = 0; k < DCTSIZE2; k++)
            if (cinfo->coef_bits[c][k] != 0) return 0;
    return 1;
}

// A progressive (Huffman) file decoded at a reduced scale: libjpeg is handed
// only the scans whose coefficients the scaled IDCT reads (jpeg_scans.h).
// At 1/8 that is the DC scans, and a 4:2:0 file's chroma (2×2 IDCT): a
// fraction of the work of decoding every scan, for the same pixels. Block
// smoothing is turned off: libjpeg would take the dropped coefficients for
// ones still to come and invent them (jdcoefct.c, decompress_smooth_data,
// even the DC of a block whose AC never arrived). A full decode never
// smooths: it refuses a file whose coefficients did not all arrive.
#ifdef LIBJPEG_TURBO_VERSION_NUMBER
enum { SKIP_SCANS = 1 };
#else
enum { SKIP_SCANS = 0 };   // thumbd_jpeg_idct_reads describes libjpeg-turbo's IDCTs
#endif

int thumbd_jpeg_drop_scans(j_decompress_ptr cinfo, thumbd_jpeg_source *src, thumbd_scan_plan *plan,
                           const void *data, size_t length) {
    if (!SKIP_SCANS || !cinfo->progressive_mode || cinfo->arith_code || cinfo->num_components > THUMBD_SCAN_MAX_COMPONENTS) return 0;
    jpeg_calc_output_dimensions(cinfo);
    thumbd_scan_frame frame = { .count = cinfo->num_components };
    int reduced = 0;
    for (int c = 0; c < cinfo->num_components; c++) {
        jpeg_component_info *comp = &cinfo->comp_info[c];
        frame.id[c] = comp->component_id;
        frame.reads[c] = thumbd_jpeg_idct_reads(comp->DCT_scaled_size);
        frame.blocks[c] = (uint64_t)comp->width_in_blocks * comp->height_in_blocks;
        if (frame.reads[c] != ~(uint64_t)0) reduced = 1;
    }
    if (!reduced || thumbd_jpeg_plan_scans(data, length, &frame, plan) != THUMBD_SCANS_DROP) return 0;
    // The walk and jpeg_read_header must agree on where the first scan's data starts.
    if (src->pub.next_input_byte != (const JOCTET *)data + plan->first_data) return 0;
    src->spans = plan->spans;
    src->span_count = plan->span_count;
    src->pub.bytes_in_buffer = 0;   // libjpeg's next read takes the first span
    cinfo->do_block_smoothing = FALSE;
    return 1;
}

int thumbd_jpeg_plan_held(j_decompress_ptr cinfo, const thumbd_scan_plan *plan) {
    if (cinfo->input_scan_number != plan->kept || !cinfo->coef_bits) return 0;
    for (int c = 0; c < cinfo->num_components; c++)
        for (int k = 0; k < DCTSIZE2; k++)
            if (cinfo->coef_bits[c][k] != plan->kept_bits[c][k]) return 0;
    return 1;
}
