#ifndef THUMBD_JPEG_MARKERS_H
#define THUMBD_JPEG_MARKERS_H
// Internal to the shim: what the JPEG decoder (jpeg.c) reads from the APPn
// segments jpeg_save_markers kept: the Exif orientation (APP1) and the ICC
// profile (APP2). Called only from jpeg.c's shims after jpeg_read_header,
// under their setjmp (jpeg_read_icc_profile can call error_exit).
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>

/// The Exif orientation (1…8) of the first APP1 that starts with
/// "Exif\0\0" (files may carry XMP in another APP1); 1 without one.
int thumbd_jpeg_marker_orientation(j_decompress_ptr cinfo);

/// The joined ICC profile of the APP2 ICC_PROFILE segments into *icc
/// (malloc'd by libjpeg, the caller frees it) and *length, which the caller
/// sets to NULL and 0 and which stay so when there is none, it is malformed
/// or it is over THUMBD_ICC_MAX_BYTES.
void thumbd_jpeg_read_icc(j_decompress_ptr cinfo, JOCTET **icc, unsigned int *length);

#endif
