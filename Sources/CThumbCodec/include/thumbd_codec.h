#ifndef THUMBD_CODEC_H
#define THUMBD_CODEC_H
// Every call into libjpeg and libpng that can fail goes through this shim:
// the libraries report fatal errors with longjmp, which must never cross a
// Swift frame. Each function owns its setjmp and returns an error code.
#include <stddef.h>

/// libjpeg-turbo's version as compiled against (JPEG_LIB_VERSION * 1000 + PNG 1.6 minor…): for --version.
const char *thumbd_codec_versions(void);

#endif
