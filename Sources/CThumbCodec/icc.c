#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lcms2.h>
#include <stdatomic.h>
#include "icc_cache.h"
#include "matrix3.h"

// Every Little CMS call lives here. lcms2 reports errors through a log
// handler and return values (it never longjmps); each profile gets its own
// context whose handler records the first message in the profile's struct,
// so concurrent decodes never share error state and nothing is printed.
// A built profile is shared through icc_cache.c and used by several decodes
// at once: after building nothing in it changes (the transform's one-pixel
// cache is off, and lcms ≥ 2.3 copies it per call anyway).

struct thumbd_icc {
    atomic_int references;
    cmsContext context;
    cmsHTRANSFORM transform;   // THUMBD_ICC_TRANSFORM only
    int kind;
    int model;
    float curves[3 * 256];     // THUMBD_ICC_MATRIX_SHAPER only
    float matrix[9];
    char message[256];
};

static void copy_text(const char *from, char *to, size_t size) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

static void on_lcms_error(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    thumbd_icc *icc = cmsGetContextUserData(context);
    if (icc && !icc->message[0]) copy_text(text, icc->message, sizeof icc->message);
}

static void ignore_lcms_error(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context; (void)code; (void)text;
}

static int profile_matches(cmsHPROFILE profile, int model) {
    cmsColorSpaceSignature space = cmsGetColorSpace(profile);
    switch (model) {
    case THUMBD_GRAY: return space == cmsSigGrayData;
    case THUMBD_RGB: return space == cmsSigRgbData;
    case THUMBD_CMYK: return space == cmsSigCmykData;
    default: return 0;
    }
}

// lcms reads an input profile through its A2B0/D2B0 table when it has one
// (perceptual intent), through its curves and colorants only otherwise.
static int is_matrix_shaper(cmsHPROFILE profile) {
    return cmsIsMatrixShaper(profile) && !cmsIsTag(profile, cmsSigAToB0Tag) && !cmsIsTag(profile, cmsSigDToB0Tag);
}

// 8-bit sample → linear light 0…1 through a profile tone curve.
static int sample_curve(cmsToneCurve *curve, float *out) {
    if (!curve) return 0;
    for (int v = 0; v < 256; v++) {
        float y = cmsEvalToneCurveFloat(curve, (float)v / 255.0f);
        if (!isfinite(y)) return 0;
        out[v] = y < 0 ? 0 : y > 1 ? 1 : y;
    }
    return 1;
}

// Colorant tags as the columns of an RGB → XYZ (D50) matrix, as lcms builds it.
static int colorants(cmsHPROFILE profile, double m[9]) {
    const cmsTagSignature tags[3] = { cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag };
    for (int c = 0; c < 3; c++) {
        const cmsCIEXYZ *xyz = cmsReadTag(profile, tags[c]);
        if (!xyz) return 0;
        m[c] = xyz->X; m[3 + c] = xyz->Y; m[6 + c] = xyz->Z;
    }
    return 1;
}

// inverse(sRGB colorants), from lcms's built-in sRGB profile. Made once:
// building that profile tabulates its tone curves, about as long as the
// rest of reading a profile.
static double srgb_inverse[9];
static int srgb_inverse_ok;
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static void make_srgb_inverse(void) {
    double srgb[9];
    cmsHPROFILE reference = cmsCreate_sRGBProfile();
    srgb_inverse_ok = reference && colorants(reference, srgb) && matrix3_invert(srgb, srgb_inverse);
    if (reference) cmsCloseProfile(reference);
}

// Curves and matrix of a matrix/TRC profile. The colorant tags are already
// adapted to the D50 PCS (Bradford, for the built-in sRGB too), and the
// perceptual intent between two matrix/shaper profiles is colorimetric, so
// source linear RGB → sRGB linear is inverse(sRGB colorants) × colorants.
// A gray profile maps Y to r = g = b = Y: its curve three times, no matrix.
static int read_matrix_shaper(thumbd_icc *icc, cmsHPROFILE profile) {
    if (icc->model == THUMBD_GRAY) {
        if (!sample_curve(cmsReadTag(profile, cmsSigGrayTRCTag), icc->curves)) return 0;
        memcpy(icc->curves + 256, icc->curves, 256 * sizeof(float));
        memcpy(icc->curves + 512, icc->curves, 256 * sizeof(float));
        const float identity[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
        memcpy(icc->matrix, identity, sizeof identity);
        return 1;
    }
    const cmsTagSignature trc[3] = { cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag };
    for (int c = 0; c < 3; c++)
        if (!sample_curve(cmsReadTag(profile, trc[c]), icc->curves + 256 * c)) return 0;
    double source[9];
    pthread_once(&srgb_once, make_srgb_inverse);
    if (!srgb_inverse_ok || !colorants(profile, source)) return 0;
    double m[9];
    matrix3_multiply(srgb_inverse, source, m);
    for (int i = 0; i < 9; i++) {
        if (!isfinite(m[i]) || fabs(m[i]) > 100) return 0;
        icc->matrix[i] = (float)m[i];
    }
    return 1;
}

// Rows reach a transform as RGBA8: RGB, or gray expanded to R = G = B (the
// first byte is read as the gray sample and the other three skipped). CMYK
// comes as 4 bytes per pixel; Adobe files store it inverted (0 = full ink),
// which is lcms's "reversed" flavour.
static cmsUInt32Number input_format(int model, int cmyk_inverted) {
    switch (model) {
    case THUMBD_GRAY: return COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | EXTRA_SH(3) | BYTES_SH(1);
    case THUMBD_CMYK: return cmyk_inverted ? TYPE_CMYK_8_REV : TYPE_CMYK_8;
    default: return TYPE_RGBA_8;
    }
}

static int create_transform(thumbd_icc *icc, cmsHPROFILE profile, int cmyk_inverted) {
    cmsHPROFILE srgb = cmsCreate_sRGBProfileTHR(icc->context);
    if (!srgb) return 0;
    // Alpha stays in place: the RGB case converts rows in place, and the gray
    // and CMYK layouts have no alpha for lcms to copy.
    cmsUInt32Number flags = cmsFLAGS_NOCACHE | (icc->model == THUMBD_RGB ? cmsFLAGS_COPY_ALPHA : 0);
    icc->transform = cmsCreateTransformTHR(icc->context, profile, input_format(icc->model, cmyk_inverted),
                                           srgb, TYPE_RGBA_8, INTENT_PERCEPTUAL, flags);
    cmsCloseProfile(srgb);
    return icc->transform != NULL;
}

static thumbd_icc *build(const void *data, size_t length, int model, int cmyk_inverted,
                         char *message, size_t message_size) {
    thumbd_icc *icc = calloc(1, sizeof *icc);
    if (!icc) { copy_text("out of memory", message, message_size); return NULL; }
    atomic_init(&icc->references, 1);
    icc->model = model;
    icc->context = cmsCreateContext(NULL, icc);
    if (!icc->context) { free(icc); copy_text("out of memory", message, message_size); return NULL; }
    cmsSetLogErrorHandlerTHR(icc->context, on_lcms_error);
    cmsHPROFILE profile = cmsOpenProfileFromMemTHR(icc->context, data, (cmsUInt32Number)length);
    const char *why = NULL;
    if (!profile) why = "unparsable profile";
    else if (!profile_matches(profile, model)) why = "profile colour space does not match the pixels";
    else if (model != THUMBD_CMYK && is_matrix_shaper(profile) && read_matrix_shaper(icc, profile))
        icc->kind = THUMBD_ICC_MATRIX_SHAPER;
    else if (create_transform(icc, profile, cmyk_inverted))
        icc->kind = THUMBD_ICC_TRANSFORM;
    else why = "lcms2 cannot build a transform to sRGB";
    if (profile) cmsCloseProfile(profile);
    if (why) {
        char text[512];
        snprintf(text, sizeof text, "%s%s%s", why, icc->message[0] ? ": " : "", icc->message);
        copy_text(text, message, message_size);
        thumbd_icc_close(icc);
        return NULL;
    }
    // Shared from here on: an error message could only race.
    cmsSetLogErrorHandlerTHR(icc->context, ignore_lcms_error);
    return icc;
}

thumbd_icc *thumbd_icc_open(const void *data, size_t length, int model, int cmyk_inverted,
                            char *message, size_t message_size) {
    if (length > THUMBD_ICC_MAX_BYTES) { copy_text("profile over 4 MiB", message, message_size); return NULL; }
    if (model != THUMBD_GRAY && model != THUMBD_RGB && model != THUMBD_CMYK) {
        copy_text("no profile applies to these pixels", message, message_size);
        return NULL;
    }
    int inverted = model == THUMBD_CMYK && cmyk_inverted;
    thumbd_icc *icc = thumbd_icc_cache_find(data, length, model, inverted);
    if (icc) return icc;
    icc = build(data, length, model, inverted, message, message_size);
    return icc ? thumbd_icc_cache_insert(icc, data, length, model, inverted) : NULL;
}

void thumbd_icc_retain(thumbd_icc *icc) { atomic_fetch_add_explicit(&icc->references, 1, memory_order_relaxed); }

int thumbd_icc_kind(const thumbd_icc *icc) { return icc->kind; }

void thumbd_icc_matrix_shaper(const thumbd_icc *icc, float *curves, float *matrix) {
    memcpy(curves, icc->curves, sizeof icc->curves);
    memcpy(matrix, icc->matrix, sizeof icc->matrix);
}

void thumbd_icc_convert_rgba(thumbd_icc *icc, void *rgba, size_t pixels) {
    if (icc->transform && icc->model != THUMBD_CMYK) cmsDoTransform(icc->transform, rgba, rgba, (cmsUInt32Number)pixels);
}

void thumbd_icc_convert_cmyk(thumbd_icc *icc, const void *cmyk, void *rgba, size_t pixels) {
    uint8_t *out = rgba;
    cmsDoTransform(icc->transform, cmyk, rgba, (cmsUInt32Number)pixels);
    for (size_t i = 0; i < pixels; i++) out[i * 4 + 3] = 255;
}

void thumbd_icc_close(thumbd_icc *icc) {
    if (!icc || atomic_fetch_sub_explicit(&icc->references, 1, memory_order_acq_rel) != 1) return;
    if (icc->transform) cmsDeleteTransform(icc->transform);
    cmsDeleteContext(icc->context);
    free(icc);
}
