#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>
#include <gif_lib.h>
#include <libheif/heif.h>
#include <avif/avif.h>
#include <lcms2.h>
#include <jxl/decode.h>
#include "thumbd_codec.h"

const char *thumbd_codec_versions(void) {
    static char text[512];
    char avif_codecs[256];
    int webp = WebPGetDecoderVersion();
    avifCodecVersions(avif_codecs);
    int lcms = cmsGetEncodedCMMversion();   // e.g. 2140 for 2.14
    uint32_t jxl = JxlDecoderVersion();      // major·1 000 000 + minor·1 000 + patch
    snprintf(text, sizeof text, "libjpeg %d, libpng %s, libwebp %d.%d.%d, giflib %d.%d.%d, libheif %s, libavif %s (%s), "
             "libjxl %u.%u.%u, lcms2 %d.%d", JPEG_LIB_VERSION, PNG_LIBPNG_VER_STRING, webp >> 16, webp >> 8 & 255,
             webp & 255, GIFLIB_MAJOR, GIFLIB_MINOR, GIFLIB_RELEASE, heif_get_version(), avifVersion(), avif_codecs,
             jxl / 1000000, jxl / 1000 % 1000, jxl % 1000, lcms / 1000, lcms / 10 % 100);
    return text;
}
