// libFuzzer target for the progressive JPEG scan plan (Sources/CThumbCodec/
// jpeg_scans.c), built by Tests/Fuzz/fuzz-jpeg-scans.sh. Two checks per input:
// - the walker alone, on any bytes, with a frame taken from the input's first
//   bytes (so hostile data reaches every branch, not only what libjpeg's
//   header reader lets through): every span lies inside the data, in order;
// - a differential decode at 1/8 and 2/8 scale, thumbd_jpeg_open (scans
//   skipped) against thumbd_jpeg_open_every_scan: when the full decode
//   succeeds the fast one must give the same pixels, and a fast decode that
//   fails must fail as the full one does. A fast decode may succeed where the
//   full one fails only when the full one fails inside a skipped scan's data
//   (jpeg_scans.h), which is not checked here.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "thumbd_codec.h"
#include "jpeg_scans.h"

typedef struct {
    int status;
    uint32_t width, height;
    uint8_t *pixels;
} decoded;

static decoded decode(const uint8_t *data, size_t size, int scale, int every_scan) {
    decoded out = { 0 };
    char message[256];
    thumbd_deadline none = { 0 };
    thumbd_jpeg_decoder *d = every_scan
        ? thumbd_jpeg_open_every_scan(data, size, scale, none, &out.width, &out.height, &out.status, message, sizeof message)
        : thumbd_jpeg_open(data, size, scale, none, &out.width, &out.height, &out.status, message, sizeof message);
    if (!d) return out;
    if ((uint64_t)out.width * out.height > (1u << 22)) { thumbd_jpeg_close(d); out.status = -1; return out; }
    out.pixels = malloc((size_t)out.width * out.height * 4 + 1);
    uint32_t done = 0, read = 0;
    while (done < out.height) {
        out.status = thumbd_jpeg_read(d, out.pixels + (size_t)done * out.width * 4, out.height - done, &read,
                                      message, sizeof message);
        if (out.status || read == 0) break;
        done += read;
    }
    thumbd_jpeg_close(d);
    return out;
}

static void walk_alone(const uint8_t *data, size_t size) {
    if (size < 6) return;
    thumbd_scan_frame frame = { .count = 1 + data[0] % 4 };
    for (int c = 0; c < frame.count; c++) {
        frame.id[c] = c + 1;
        frame.reads[c] = thumbd_jpeg_idct_reads(1 + (data[1] >> (2 * c)) % 8);
        frame.blocks[c] = 1 + data[2 + c % 4];
    }
    thumbd_scan_plan plan;
    if (thumbd_jpeg_plan_scans(data + 6, size - 6, &frame, &plan) != THUMBD_SCANS_DROP) return;
    size_t previous = plan.first_data;
    if (plan.kept < 1 || plan.kept >= plan.scans || plan.scans > THUMBD_JPEG_MAX_SCANS) abort();
    for (int i = 0; i < plan.span_count; i++) {
        if (plan.spans[i].start < previous || plan.spans[i].end <= plan.spans[i].start || plan.spans[i].end > size - 6)
            abort();
        previous = plan.spans[i].end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    walk_alone(data, size);
    for (int scale = 1; scale <= 2; scale++) {
        decoded fast = decode(data, size, scale, 0), full = decode(data, size, scale, 1);
        if (full.status == 0 && fast.status != 0) abort();   // the fast path refused what decodes
        if (full.status == 0 && (fast.width != full.width || fast.height != full.height ||
                                 memcmp(fast.pixels, full.pixels, (size_t)full.width * full.height * 4) != 0))
            abort();   // different pixels
        if (fast.status != 0 && fast.status != full.status) abort();   // failed differently
        free(fast.pixels);
        free(full.pixels);
    }
    return 0;
}
