#ifndef THUMBD_JPEG_SOURCE_H
#define THUMBD_JPEG_SOURCE_H
// Internal to the shim: what the JPEG decoder (jpeg.c) hands libjpeg to read
// (the file in memory, or only the scans a scaled decode needs) and whether
// the data was all there. The functions that call into libjpeg
// (thumbd_jpeg_drop_scans) are called only from jpeg.c's shims after their
// setjmp, since libjpeg's error_exit longjmps there.
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include "jpeg_scans.h"

/// A memory source like jpeg_mem_src, except that running out of data
/// supplies an EOI marker silently: a file whose only flaw is a missing EOI
/// trailer then decodes. Data missing inside a scan still shows: the Huffman
/// decoder warns JWRN_HIT_MARKER when it meets the marker while it needs bits;
/// the arithmetic decoder is silent, so the source also notes which iMCU row
/// the scan had reached when the data ran out. With spans set (a progressive
/// file's scan plan, jpeg_scans.h) it hands libjpeg those byte ranges of the
/// file one after the other, and runs out after the last.
typedef struct {
    struct jpeg_source_mgr pub;
    int ran_out;
    JDIMENSION ran_out_at_row;
    const JOCTET *base;
    const thumbd_byte_span *spans;
    int span_count, next_span;
} thumbd_jpeg_source;

/// Makes `src` (the caller's, alive as long as cinfo reads) the source of
/// `cinfo`, reading all `length` bytes of `data`.
void thumbd_jpeg_source_init(j_decompress_ptr cinfo, thumbd_jpeg_source *src, const void *data, size_t length);

/// True when the data ran out before the scan in progress reached its last
/// iMCU row (a scan that had finished leaves input_iMCU_row at the total).
int thumbd_jpeg_ran_out_mid_scan(j_decompress_ptr cinfo);

/// A progressive file cut between scans decodes without any warning, just
/// blurrier: true when every coefficient has received all its bits (and for
/// a sequential file).
int thumbd_jpeg_progressive_complete(j_decompress_ptr cinfo);

/// After jpeg_read_header of `data` through `src`: plans which scans the
/// scaled decode needs (into `plan`) and, when some can be dropped, makes
/// `src` hand libjpeg only those. True when it does.
int thumbd_jpeg_drop_scans(j_decompress_ptr cinfo, thumbd_jpeg_source *src, thumbd_scan_plan *plan,
                           const void *data, size_t length);

/// After jpeg_start_decompress with dropped scans: libjpeg saw exactly what
/// `plan` says (the scans it kept, each coefficient's bits).
int thumbd_jpeg_plan_held(j_decompress_ptr cinfo, const thumbd_scan_plan *plan);

#endif
