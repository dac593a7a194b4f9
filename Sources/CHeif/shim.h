// heif.h uses uint8_t and size_t; include their headers first like CJPEG does.
#include <stddef.h>
#include <stdint.h>
#include <libheif/heif.h>
