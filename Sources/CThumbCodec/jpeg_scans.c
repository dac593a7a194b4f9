#include <string.h>
#include "jpeg_scans.h"

// Why a scan can be dropped without changing a pixel (libjpeg-turbo 2.1,
// jdphuff.c, jdcoefct.c): a scan writes only the coefficients of its band
// Ss…Se in its components; a first AC scan (Ah = 0) decodes without looking at
// any coefficient; a refinement scan (Ah > 0) reads whether each coefficient
// of its band is already non-zero, so it needs every earlier scan over its
// band. Walking the scans backwards from what the IDCT reads, a scan is kept
// when its band meets a position still needed, and a kept refinement adds its
// band. Every other byte (DHT, DQT, DRI, APPn, COM) is kept, so the tables a
// kept scan decodes with are those a full decode uses. A component's first
// scan is kept too: libjpeg latches its quantisation table there.

// Zigzag position → natural (row-major) index: JPEG Figure A.6, libjpeg's jpeg_natural_order.
static const uint8_t natural_order[64] = {
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
    12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
    58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

uint64_t thumbd_jpeg_idct_reads(int scaled_size) {
    unsigned lines;   // bit r: row r and column r of the 8×8 coefficients are read
    switch (scaled_size) {
    case 1: lines = 0x01; break;   // jpeg_idct_1x1: DC alone
    case 2: lines = 0xAB; break;   // jidctred.c (and its SSE2 twin): rows/columns 0, 1, 3, 5, 7
    case 3: lines = 0x07; break;   // jidctint.c's 3x3…7x7: the top-left N×N
    case 4: lines = 0xEF; break;   // jidctred.c: all but row/column 4
    case 5: lines = 0x1F; break;
    case 6: lines = 0x3F; break;
    case 7: lines = 0x7F; break;
    default: return ~(uint64_t)0;
    }
    uint64_t mask = 0;
    for (int k = 0; k < 64; k++)
        if ((lines >> (natural_order[k] / 8) & 1) && (lines >> (natural_order[k] % 8) & 1))
            mask |= (uint64_t)1 << k;
    return mask;
}

typedef struct {
    size_t start, end;        // the SOS marker's first byte; the first byte of the marker ending its data
    unsigned comps;           // bit c: frame component c is in the scan
    int ss, se, ah, al;
    int keep;                 // must reach libjpeg whatever its band
    unsigned restart_interval;
    uint64_t restarts;        // RSTn markers in its data
    int restarts_in_order;    // each was RST(n mod 8)
} scan;

static int drop_nothing(thumbd_scan_plan *plan, const char *why) {
    plan->why = why;
    return THUMBD_SCANS_ALL;
}

// libjpeg's next_marker: skip bytes up to an FF, then repeated FFs; FF 00 is
// a stuffed data byte. *start gets the first FF of the marker's run.
static int next_marker(const uint8_t *p, size_t n, size_t *pos, size_t *start, int *code) {
    size_t i = *pos;
    while (i < n) {
        const uint8_t *ff = memchr(p + i, 0xFF, n - i);
        if (!ff) return 0;
        size_t first = (size_t)(ff - p);
        i = first + 1;
        while (i < n && p[i] == 0xFF) i++;
        if (i >= n) return 0;
        if (p[i] != 0) {
            *start = first;
            *code = p[i];
            *pos = i + 1;
            return 1;
        }
        i++;
    }
    return 0;
}

// jpeg_make_d_derived_tbl's check that the code lengths make a Huffman code
// (Figure C.2; no code of all ones): a scan using a table that fails it is
// an error in libjpeg.
static int huffman_code_fits(const uint8_t bits[17]) {
    uint8_t size[257];
    int p = 0;
    for (int l = 1; l <= 16; l++)
        for (int i = 0; i < bits[l]; i++) size[p++] = (uint8_t)l;   // p ≤ 256: checked by read_dht
    size[p] = 0;
    unsigned code = 0;
    int si = size[0];
    p = 0;
    while (size[p]) {
        while (size[p] == si) { code++; p++; }
        if (code >= (1u << si)) return 0;
        code <<= 1;
        si++;
    }
    return 1;
}

// get_dht's parse. *ac_tables: bit t set while AC table t is defined with a
// usable code. 0 when libjpeg would refuse the segment.
static int read_dht(const uint8_t *s, size_t length, unsigned *ac_tables) {
    size_t i = 0;
    while (length - i > 16) {
        int index = s[i];
        uint8_t bits[17] = { 0 };
        unsigned count = 0;
        for (int l = 1; l <= 16; l++) count += bits[l] = s[i + l];
        i += 17;
        if (count > 256 || count > length - i) return 0;
        i += count;
        int ac = index & 0x10;
        int slot = ac ? index - 0x10 : index;
        if (slot < 0 || slot > 3) return 0;
        if (ac) *ac_tables = huffman_code_fits(bits) ? *ac_tables | 1u << slot : *ac_tables & ~(1u << slot);
    }
    return i == length;
}

// get_sos and start_pass_phuff_decoder's checks; 0 when libjpeg would stop
// at this scan (the full decode then answers).
static int read_sos(const uint8_t *s, size_t length, const thumbd_scan_frame *frame, unsigned ac_tables,
                    unsigned *seen, scan *out) {
    if (length < 1) return 0;
    int ns = s[0];
    if (ns < 1 || ns > 4 || length != (size_t)(4 + 2 * ns)) return 0;
    unsigned comps = 0;
    int tables_usable = 1;
    for (int i = 0; i < ns; i++) {
        int c = 0;
        while (c < frame->count && frame->id[c] != s[1 + 2 * i]) c++;
        if (c == frame->count || (comps & 1u << c)) return 0;
        comps |= 1u << c;
        if (!(ac_tables >> (s[2 + 2 * i] & 15) & 1)) tables_usable = 0;
    }
    out->comps = comps;
    out->ss = s[1 + 2 * ns];
    out->se = s[2 + 2 * ns];
    out->ah = s[3 + 2 * ns] >> 4;
    out->al = s[3 + 2 * ns] & 15;
    if (out->ss == 0 ? out->se != 0 : out->ss > out->se || out->se > 63 || ns != 1) return 0;
    if (out->ah != 0 && out->al != out->ah - 1) return 0;
    if (out->al > 13) return 0;
    // An AC table libjpeg would refuse is found by libjpeg itself, as is a
    // component's first scan, where its quantisation table is latched.
    out->keep = (out->ss > 0 && !tables_usable) || (comps & ~*seen) != 0;
    *seen |= comps;
    return 1;
}

// A scan's data ends at `end`. Whether libjpeg would meet the restart markers
// it expects is decided from the markers alone: when they are not exactly
// the ones a full decode reads, the scan is kept and libjpeg judges it.
static void end_scan(scan *sc, size_t end, const thumbd_scan_frame *frame) {
    sc->end = end;
    if (sc->comps & (sc->comps - 1)) return;   // interleaved: a DC scan, always kept
    int c = 0;
    while (!(sc->comps >> c & 1)) c++;
    uint64_t mcus = frame->blocks[c];
    uint64_t expected = sc->restart_interval && mcus ? (mcus - 1) / sc->restart_interval : 0;
    if (sc->restarts != expected || !sc->restarts_in_order) sc->keep = 1;
}

static uint64_t band(const scan *sc) {
    uint64_t upper = sc->se == 63 ? ~(uint64_t)0 : ((uint64_t)1 << (sc->se + 1)) - 1;
    return upper & ~(((uint64_t)1 << sc->ss) - 1);
}

// coef_bits as libjpeg sets them at the start of each scan (Al over the band).
static void replay(const scan *scans, int count, const int *use, int components, int8_t bits[][64]) {
    memset(bits, -1, (size_t)components * 64);
    for (int i = 0; i < count; i++) {
        if (use && !use[i]) continue;
        for (int c = 0; c < components; c++)
            if (scans[i].comps >> c & 1)
                for (int k = scans[i].ss; k <= scans[i].se; k++) bits[c][k] = (int8_t)scans[i].al;
    }
}

// The walk: every marker from SOI to EOI, as libjpeg's marker reader sees them.
static int walk(const uint8_t *p, size_t n, const thumbd_scan_frame *frame, scan *scans, int *count,
                size_t *data_end, thumbd_scan_plan *plan) {
    unsigned ac_tables = 0, seen = 0, restart_interval = 0;
    int in_scan = 0, saw_sof = 0;
    size_t pos = 2, start;
    int code;
    *count = 0;
    *data_end = n;
    while (next_marker(p, n, &pos, &start, &code)) {
        scan *current = in_scan ? &scans[*count - 1] : NULL;
        if (code >= 0xD0 && code <= 0xD7) {   // RSTn: inside a scan's data
            if (!current) return drop_nothing(plan, "restart marker outside a scan");
            if ((uint64_t)(code - 0xD0) != current->restarts % 8) current->restarts_in_order = 0;
            current->restarts++;
            continue;
        }
        if (current) end_scan(current, start, frame);
        in_scan = 0;
        if (code == 0xD9) {   // EOI: libjpeg reads nothing after it
            *data_end = pos;
            return THUMBD_SCANS_DROP;
        }
        if (n - pos < 2) return drop_nothing(plan, "data ends inside a marker");
        size_t length = (size_t)p[pos] << 8 | p[pos + 1];
        if (length < 2 || length > n - pos) return drop_nothing(plan, "marker segment length out of bounds");
        const uint8_t *s = p + pos + 2;
        size_t size = length - 2;
        switch (code) {
        case 0xC2:   // the frame (progressive Huffman), before any scan
            if (saw_sof || *count) return drop_nothing(plan, "second frame header");
            saw_sof = 1;
            break;
        case 0xC4:
            if (!read_dht(s, size, &ac_tables)) return drop_nothing(plan, "DHT libjpeg refuses");
            break;
        case 0xDD:
            if (size != 2) return drop_nothing(plan, "DRI of a bad length");
            restart_interval = (unsigned)s[0] << 8 | s[1];
            break;
        case 0xDA:
            if (!saw_sof) return drop_nothing(plan, "scan before the frame header");
            if (*count == THUMBD_JPEG_MAX_SCANS) return drop_nothing(plan, "more than 100 scans");
            current = &scans[*count];
            memset(current, 0, sizeof *current);
            if (!read_sos(s, size, frame, ac_tables, &seen, current)) return drop_nothing(plan, "scan header libjpeg refuses");
            current->start = start;
            current->restart_interval = restart_interval;
            current->restarts_in_order = 1;
            if (++*count == 1) plan->first_data = pos + length;
            in_scan = 1;
            break;
        case 0xDB: case 0xFE:
            break;
        default:
            if (code >= 0xE0 && code <= 0xEF) break;   // APPn
            return drop_nothing(plan, "a marker the plan does not follow");
        }
        pos += length;
    }
    // No EOI. Data running to the end of the file: libjpeg alone can tell
    // whether that last scan is complete.
    if (in_scan) {
        end_scan(&scans[*count - 1], n, frame);
        scans[*count - 1].keep = 1;
    }
    return THUMBD_SCANS_DROP;
}

int thumbd_jpeg_plan_scans(const uint8_t *data, size_t length, const thumbd_scan_frame *frame,
                           thumbd_scan_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (frame->count < 1 || frame->count > THUMBD_SCAN_MAX_COMPONENTS) return drop_nothing(plan, "component count");
    for (int a = 0; a < frame->count; a++)
        for (int b = a + 1; b < frame->count; b++)
            if (frame->id[a] == frame->id[b]) return drop_nothing(plan, "duplicate component id");
    if (length < 2 || data[0] != 0xFF || data[1] != 0xD8) return drop_nothing(plan, "no SOI");

    scan scans[THUMBD_JPEG_MAX_SCANS];
    int count;
    size_t data_end;
    if (walk(data, length, frame, scans, &count, &data_end, plan) != THUMBD_SCANS_DROP) return THUMBD_SCANS_ALL;
    if (count == 0) return drop_nothing(plan, "no scan");
    plan->scans = count;

    // progressive_complete (jpeg.c) over every scan: a file cut between
    // scans is the full decode's to refuse.
    int8_t bits[THUMBD_SCAN_MAX_COMPONENTS][64];
    replay(scans, count, NULL, frame->count, bits);
    for (int c = 0; c < frame->count; c++)
        for (int k = 0; k < 64; k++)
            if (bits[c][k] != 0) return drop_nothing(plan, "a coefficient never gets all its bits");

    int keep[THUMBD_JPEG_MAX_SCANS];
    uint64_t needed[THUMBD_SCAN_MAX_COMPONENTS];
    for (int c = 0; c < frame->count; c++) needed[c] = frame->reads[c];
    for (int i = count - 1; i >= 0; i--) {
        uint64_t range = band(&scans[i]);
        keep[i] = scans[i].keep || scans[i].ss == 0;
        for (int c = 0; c < frame->count; c++)
            if (scans[i].comps >> c & 1 && needed[c] & range) keep[i] = 1;
        if (keep[i] && scans[i].ah > 0)
            for (int c = 0; c < frame->count; c++)
                if (scans[i].comps >> c & 1) needed[c] |= range;
    }
    if (!keep[0]) return drop_nothing(plan, "first scan not kept");   // unreachable: it is every component's first
    for (int i = 0; i < count; i++) plan->kept += keep[i];
    if (plan->kept == count) return drop_nothing(plan, "every scan is needed");

    size_t from = plan->first_data;
    for (int i = 1; i < count; i++) {
        if (keep[i]) continue;
        if (scans[i].start > from) plan->spans[plan->span_count++] = (thumbd_byte_span){ from, scans[i].start };
        from = scans[i].end;
    }
    if (data_end > from) plan->spans[plan->span_count++] = (thumbd_byte_span){ from, data_end };
    replay(scans, count, keep, frame->count, plan->kept_bits);
    return THUMBD_SCANS_DROP;
}
