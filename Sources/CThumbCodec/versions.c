#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include "thumbd_codec.h"

const char *thumbd_codec_versions(void) {
    static char text[64];
    snprintf(text, sizeof text, "libjpeg %d, libpng %s", JPEG_LIB_VERSION, PNG_LIBPNG_VER_STRING);
    return text;
}
