// What jpeg.c reads from the saved APPn segments (jpeg_markers.h).
#include <stdlib.h>
#include <string.h>
#include "thumbd_codec.h"
#include "jpeg_markers.h"

int thumbd_jpeg_marker_orientation(j_decompress_ptr cinfo) {
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0\0", 6) == 0)
            return thumbd_exif_orientation(m->data + 6, m->data_length - 6);
    }
    return 1;
}

// Bytes of profile the APP2 ICC_PROFILE segments carry (each has a 14-byte
// "ICC_PROFILE\0" + sequence + count header), to refuse a profile over 4 MiB
// before jpeg_read_icc_profile allocates and joins it.
static size_t icc_marker_bytes(j_decompress_ptr cinfo) {
    size_t total = 0;
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 2 && m->data_length >= 14 && memcmp(m->data, "ICC_PROFILE", 12) == 0)
            total += m->data_length - 14;
    return total;
}

// jpeg_read_icc_profile checks the sequence numbers (each 1…count once, all
// present) and joins the segments in sequence order, not file order; a
// malformed set only warns (ignored by jpeg.c's on_emit_message) and yields nothing.
void thumbd_jpeg_read_icc(j_decompress_ptr cinfo, JOCTET **icc, unsigned int *length) {
    size_t bytes = icc_marker_bytes(cinfo);
    if (bytes == 0 || bytes > THUMBD_ICC_MAX_BYTES) return;
    if (!jpeg_read_icc_profile(cinfo, icc, length)) {
        free(*icc);
        *icc = NULL;
        *length = 0;
    }
}
