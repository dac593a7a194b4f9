#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>
#include <gif_lib.h>
#include <libheif/heif.h>
#include <avif/avif.h>
#include "thumbd_codec.h"

const char *thumbd_codec_versions(void) {
    static char text[512];
    char avif_codecs[256];
    int webp = WebPGetDecoderVersion();
    avifCodecVersions(avif_codecs);
    snprintf(text, sizeof text, "libjpeg %d, libpng %s, libwebp %d.%d.%d, giflib %d.%d.%d, libheif %s, libavif %s (%s)",
             JPEG_LIB_VERSION, PNG_LIBPNG_VER_STRING, webp >> 16, webp >> 8 & 255, webp & 255,
             GIFLIB_MAJOR, GIFLIB_MINOR, GIFLIB_RELEASE, heif_get_version(), avifVersion(), avif_codecs);
    return text;
}
