// Little CMS 2: only the C shim (CThumbCodec/icc.c) calls it; this target
// exists so SwiftPM finds and links the library through pkg-config.
#include <lcms2.h>
