#ifndef THUMBD_JPEG_SCANS_H
#define THUMBD_JPEG_SCANS_H
// Internal to the shim: which scans of a progressive (Huffman) JPEG a
// DCT-scaled decode needs. At 1/8 scale libjpeg's 1×1 IDCT reads only each
// block's DC coefficient, yet libjpeg decodes every AC scan into its
// coefficient buffer first — most of a progressive decode's time. The plan
// lists the byte spans libjpeg is handed instead: every marker segment, the
// scans whose coefficients the scaled IDCT reads, and nothing of the others.
// Pure parsing, bounded by the data; no libjpeg call.
#include <stddef.h>
#include <stdint.h>
#include "thumbd_codec.h"

/// Frame components the plan handles (gray, YCbCr, RGB, CMYK, YCCK).
#define THUMBD_SCAN_MAX_COMPONENTS 4

/// The frame as libjpeg read it from the header (after jpeg_calc_output_dimensions).
typedef struct {
    int count;                                   // components, 1…THUMBD_SCAN_MAX_COMPONENTS
    int id[THUMBD_SCAN_MAX_COMPONENTS];          // component ids, in frame order
    uint64_t reads[THUMBD_SCAN_MAX_COMPONENTS];  // zigzag positions its scaled IDCT reads (bit k: position k)
    uint64_t blocks[THUMBD_SCAN_MAX_COMPONENTS]; // width_in_blocks × height_in_blocks: a one-component scan's MCUs
} thumbd_scan_frame;

/// Bytes [start, end) of the file.
typedef struct {
    size_t start, end;
} thumbd_byte_span;

/// What thumbd_jpeg_plan_scans found.
typedef struct {
    int scans;                 // SOS segments before EOI (or the end of the data)
    int kept;                  // of which libjpeg is to decode
    size_t first_data;         // offset just past the first SOS segment: where jpeg_read_header stops
    int span_count;
    thumbd_byte_span spans[THUMBD_JPEG_MAX_SCANS];   // from first_data on, in order
    // The coef_bits libjpeg ends with after the kept scans (-1: no scan
    // covered the coefficient, else the Al of the last one that did).
    int8_t kept_bits[THUMBD_SCAN_MAX_COMPONENTS][64];
    const char *why;           // THUMBD_SCANS_ALL: the reason (tests, debugging)
} thumbd_scan_plan;

enum {
    THUMBD_SCANS_ALL = 0,    // decode the file as it is: nothing to drop, or something a full decode must judge
    THUMBD_SCANS_DROP = 1,   // hand libjpeg only plan->spans
};

/// Zigzag positions libjpeg-turbo 2.1's IDCT for an N×N output block
/// (DCT_scaled_size N) reads; every position for 8 and above.
uint64_t thumbd_jpeg_idct_reads(int scaled_size);

/// Walks a progressive JPEG from SOI to EOI as libjpeg reads it and plans
/// which scans to drop. THUMBD_SCANS_ALL whenever the answer of a full decode
/// could differ: a structure it does not follow exactly (a marker other than
/// DHT, DQT, DRI, APPn, COM between scans, a segment cut short, a malformed
/// or invalid scan header), more than THUMBD_JPEG_MAX_SCANS scans, or scans
/// that leave a coefficient without all its bits (a truncated file).
int thumbd_jpeg_plan_scans(const uint8_t *data, size_t length, const thumbd_scan_frame *frame,
                           thumbd_scan_plan *plan);

#endif
