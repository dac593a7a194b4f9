/* Writes the ICC profiles the colour tests embed, with Little CMS 2 (liblcms2-dev):
 *   display-p3.icc    Display P3: DCI-P3 primaries, D65 white, the sRGB tone curve; matrix/TRC, v4
 *   gray-gamma18.icc  gray TRC, gamma 1.8; v4
 *   rgb-lut.icc       RGB input profile with only an A2B0 table (17^3 grid, Lab PCS) sampled from
 *                     P3 primaries with a gamma-2.0 curve: the LUT path
 *   cmyk-lut.icc      CMYK output profile with only an A2B0 table (9^4 grid, Lab PCS): inks with 25 %
 *                     dot gain on white paper, so it differs clearly from the naive CMYK inversion
 *   gcc -O2 -o /tmp/make-profiles make-profiles.c -llcms2 -lm && /tmp/make-profiles     (in this folder)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <lcms2.h>

static const cmsCIExyY d65 = { 0.3127, 0.3290, 1.0 };
static const cmsCIExyYTRIPLE p3 = { { 0.680, 0.320, 1.0 }, { 0.265, 0.690, 1.0 }, { 0.150, 0.060, 1.0 } };

static void describe(cmsHPROFILE p, const char *text) {
    cmsMLU *mlu = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(mlu, "en", "US", text);
    cmsWriteTag(p, cmsSigProfileDescriptionTag, mlu);
    cmsWriteTag(p, cmsSigCopyrightTag, mlu);
    cmsMLUfree(mlu);
}

static void save(cmsHPROFILE p, const char *path) {
    if (!cmsSaveProfileToFile(p, path)) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
    cmsCloseProfile(p);
}

static cmsHPROFILE p3_with(cmsToneCurve *curve) {
    cmsToneCurve *curves[3] = { curve, curve, curve };
    return cmsCreateRGBProfile(&d65, &p3, curves);
}

static cmsHTRANSFORM to_lab;   // the sampler's device → Lab (v4 16-bit encoding, as the pipeline wants)

static int sample_rgb(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    (void)cargo;
    cmsDoTransform(to_lab, in, out, 1);
    return 1;
}

static int sample_cmyk(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    (void)cargo;
    double k = in[3] / 65535.0, rgb16[3];
    for (int c = 0; c < 3; c++) {
        double ink = in[c] / 65535.0;
        double gain = 1 - pow(1 - ink, 1.25), kgain = 1 - pow(1 - k, 1.25);   // dot gain darkens midtones
        rgb16[c] = (1 - gain) * (1 - kgain) * 65535.0;
    }
    cmsUInt16Number rgb[3] = { (cmsUInt16Number)lround(rgb16[0]), (cmsUInt16Number)lround(rgb16[1]),
                               (cmsUInt16Number)lround(rgb16[2]) };
    cmsDoTransform(to_lab, rgb, out, 1);
    return 1;
}

static cmsHPROFILE lut_profile(cmsColorSpaceSignature space, cmsProfileClassSignature cls, int inputs, int grid,
                               cmsSAMPLER16 sampler, const char *text) {
    cmsHPROFILE p = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(p, 4.3);
    cmsSetDeviceClass(p, cls);
    cmsSetColorSpace(p, space);
    cmsSetPCS(p, cmsSigLabData);
    cmsSetHeaderRenderingIntent(p, INTENT_PERCEPTUAL);
    cmsPipeline *lut = cmsPipelineAlloc(NULL, inputs, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, grid, inputs, 3, NULL);
    cmsStageSampleCLut16bit(clut, sampler, NULL, 0);
    // lutAtoBType stores A curves, CLUT, B curves: identity curves around the table.
    cmsPipelineInsertStage(lut, cmsAT_END, cmsStageAllocToneCurves(NULL, inputs, NULL));
    cmsPipelineInsertStage(lut, cmsAT_END, clut);
    cmsPipelineInsertStage(lut, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
    cmsWriteTag(p, cmsSigAToB0Tag, lut);
    cmsWriteTag(p, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsPipelineFree(lut);
    describe(p, text);
    return p;
}

int main(void) {
    const double srgb_curve[5] = { 2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045 };
    cmsToneCurve *srgb = cmsBuildParametricToneCurve(NULL, 4, srgb_curve);
    cmsHPROFILE profile = p3_with(srgb);
    describe(profile, "Display P3 (thumbd test, lcms2)");
    save(profile, "display-p3.icc");

    cmsToneCurve *g18 = cmsBuildGamma(NULL, 1.8);
    profile = cmsCreateGrayProfile(cmsD50_xyY(), g18);
    describe(profile, "Gray gamma 1.8 (thumbd test, lcms2)");
    save(profile, "gray-gamma18.icc");

    cmsToneCurve *g20 = cmsBuildGamma(NULL, 2.0);
    cmsHPROFILE source = p3_with(g20), lab = cmsCreateLab4Profile(NULL);
    to_lab = cmsCreateTransform(source, TYPE_RGB_16, lab, TYPE_Lab_16, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
    save(lut_profile(cmsSigRgbData, cmsSigInputClass, 3, 17, sample_rgb, "P3 gamma 2.0 as a 17-point LUT (thumbd test, lcms2)"),
         "rgb-lut.icc");
    cmsDeleteTransform(to_lab);
    cmsCloseProfile(source);

    source = cmsCreate_sRGBProfile();
    to_lab = cmsCreateTransform(source, TYPE_RGB_16, lab, TYPE_Lab_16, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOOPTIMIZE);
    save(lut_profile(cmsSigCmykData, cmsSigOutputClass, 4, 9, sample_cmyk, "CMYK with dot gain, 9-point LUT (thumbd test, lcms2)"),
         "cmyk-lut.icc");
    cmsDeleteTransform(to_lab);
    cmsCloseProfile(source);
    cmsCloseProfile(lab);
    cmsFreeToneCurve(srgb);
    cmsFreeToneCurve(g18);
    cmsFreeToneCurve(g20);
    return 0;
}
