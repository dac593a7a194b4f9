#include <math.h>
#include <string.h>
#include "thumbd_codec.h"
#include "matrix3.h"

// HEIF/AVIF nclx colour descriptions as a tone curve per channel plus a 3×3
// matrix to linear sRGB: the same shape a matrix/TRC ICC profile takes, so
// the imaging layer converts the small resampled result (API.md § Output
// "Colour"). Pure arithmetic from ITU-T H.273's tables; no lcms2 involved.

typedef struct { double rx, ry, gx, gy, bx, by, wx, wy; } primaries;

static const double d65x = 0.3127, d65y = 0.3290;

// H.273 Table 2. Codes not listed (0, 2 unspecified, 10 = CIE XYZ, reserved)
// are taken as BT.709, i.e. sRGB primaries.
static int lookup_primaries(int code, primaries *p) {
    switch (code) {
    case 4:  *p = (primaries){ 0.67, 0.33, 0.21, 0.71, 0.14, 0.08, 0.310, 0.316 }; return 1;   // BT.470 M, illuminant C
    case 5:  *p = (primaries){ 0.64, 0.33, 0.29, 0.60, 0.15, 0.06, d65x, d65y }; return 1;     // BT.470 B/G
    case 6:
    case 7:  *p = (primaries){ 0.630, 0.340, 0.310, 0.595, 0.155, 0.070, d65x, d65y }; return 1;  // BT.601 525, SMPTE 240M
    case 8:  *p = (primaries){ 0.681, 0.319, 0.243, 0.692, 0.145, 0.049, 0.310, 0.316 }; return 1;  // generic film
    case 9:  *p = (primaries){ 0.708, 0.292, 0.170, 0.797, 0.131, 0.046, d65x, d65y }; return 1;  // BT.2020 / BT.2100
    case 11: *p = (primaries){ 0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.314, 0.351 }; return 1;  // DCI-P3 (RP 431-2)
    case 12: *p = (primaries){ 0.680, 0.320, 0.265, 0.690, 0.150, 0.060, d65x, d65y }; return 1;  // Display P3 (EG 432-1)
    case 22: *p = (primaries){ 0.630, 0.340, 0.295, 0.605, 0.155, 0.077, d65x, d65y }; return 1;  // EBU Tech 3213-E
    default: return 0;
    }
}

static void xyz_of(double x, double y, double out[3]) {
    out[0] = x / y; out[1] = 1; out[2] = (1 - x - y) / y;
}

// Linear RGB → XYZ for these primaries, normalised to their white (Y = 1).
static int rgb_to_xyz(const primaries *p, double m[9]) {
    double r[3], g[3], b[3], w[3], columns[9], inverse[9];
    xyz_of(p->rx, p->ry, r); xyz_of(p->gx, p->gy, g); xyz_of(p->bx, p->by, b); xyz_of(p->wx, p->wy, w);
    for (int i = 0; i < 3; i++) { columns[i * 3] = r[i]; columns[i * 3 + 1] = g[i]; columns[i * 3 + 2] = b[i]; }
    if (!matrix3_invert(columns, inverse)) return 0;
    double s[3];
    for (int i = 0; i < 3; i++) s[i] = inverse[i * 3] * w[0] + inverse[i * 3 + 1] * w[1] + inverse[i * 3 + 2] * w[2];
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++) m[i * 3 + c] = columns[i * 3 + c] * s[c];
    return 1;
}

// Bradford adaptation from white (wx, wy) to D65, as ICC profiles adapt to D50.
static int adapt_to_d65(double wx, double wy, double out[9]) {
    static const double bradford[9] = { 0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296 };
    double source[3], target[3], inverse[9];
    xyz_of(wx, wy, source); xyz_of(d65x, d65y, target);
    double scale[9] = { 0 };
    for (int i = 0; i < 3; i++) {
        double s = bradford[i * 3] * source[0] + bradford[i * 3 + 1] * source[1] + bradford[i * 3 + 2] * source[2];
        double t = bradford[i * 3] * target[0] + bradford[i * 3 + 1] * target[1] + bradford[i * 3 + 2] * target[2];
        scale[i * 4] = t / s;
    }
    if (!matrix3_invert(bradford, inverse)) return 0;
    matrix3_multiply(scale, bradford, out);
    matrix3_multiply(inverse, out, out);
    return 1;
}

static double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4); }

// SMPTE ST 2084 EOTF, in cd/m².
static double pq_to_nits(double v) {
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128;
    const double c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
    double p = pow(v, 1 / m2);
    double num = p - c1 > 0 ? p - c1 : 0;
    return 10000 * pow(num / (c2 - c3 * p), 1 / m1);
}

// BT.2100 HLG inverse OETF (scene light 0…1) followed by the OOTF's 1.2
// power of a 1000 cd/m² display, applied per channel.
static double hlg_to_display(double v) {
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    double scene = v <= 0.5 ? v * v / 3 : (exp((v - c) / a) + b) / 12;
    return pow(scene, 1.2);
}

// Sample → linear light relative to sRGB white. HDR transfers are not tone
// mapped: BT.2408 reference white (203 cd/m², HLG signal 0.75) becomes
// sRGB white and brighter values clip. The BT.709 family (1, 6, 14, 15)
// and any code not handled here use the sRGB curve: for 8-bit stills the
// two differ by at most a few levels in the shadows, and treating them
// alike keeps the many files tagged 1/1 byte-for-byte unchanged.
static double to_linear(int transfer, double v) {
    switch (transfer) {
    case 4: return pow(v, 2.2);
    case 5: return pow(v, 2.8);
    case 8: return v;
    case 16: return pq_to_nits(v) / 203;
    case 18: return hlg_to_display(v) / hlg_to_display(0.75);
    default: return srgb_to_linear(v);
    }
}

static int srgb_like(int transfer) {
    return transfer != 4 && transfer != 5 && transfer != 8 && transfer != 16 && transfer != 18;
}

int thumbd_nclx_matrix_shaper(const thumbd_nclx *nclx, float *curves, float *matrix) {
    primaries source;
    int known = lookup_primaries(nclx->primaries, &source);
    if (!known && srgb_like(nclx->transfer)) return 0;
    double m[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    if (known) {
        const primaries srgb = { 0.64, 0.33, 0.30, 0.60, 0.15, 0.06, d65x, d65y };
        double to_xyz[9], srgb_to_xyz[9], from_xyz[9], adapt[9];
        if (!rgb_to_xyz(&source, to_xyz) || !rgb_to_xyz(&srgb, srgb_to_xyz) || !matrix3_invert(srgb_to_xyz, from_xyz)
            || !adapt_to_d65(source.wx, source.wy, adapt)) return 0;
        matrix3_multiply(adapt, to_xyz, m);
        matrix3_multiply(from_xyz, m, m);
    }
    for (int i = 0; i < 9; i++) {
        if (!isfinite(m[i])) return 0;
        matrix[i] = (float)m[i];
    }
    for (int v = 0; v < 256; v++) {
        double y = to_linear(nclx->transfer, v / 255.0);
        float f = (float)(y < 0 ? 0 : y > 1 ? 1 : y);
        curves[v] = curves[256 + v] = curves[512 + v] = f;
    }
    return 1;
}
