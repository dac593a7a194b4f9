/* Writes cmyk.jpg and ycck.jpg: testorig's pixels (from djpeg/testorig.ppm) as
 * Adobe CMYK and YCCK JPEGs with inverted values, the way Photoshop stores them.
 * K = 255 - max(R,G,B); C = (255-R-K)*255/(255-K) etc.; stored = 255 - ink.
 *   gcc -O2 -o /tmp/make-cmyk make-cmyk.c -ljpeg && /tmp/make-cmyk        (in this folder)
 */
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

static void write_jpeg(const char *path, J_COLOR_SPACE space, unsigned char *cmyk, int w, int h) {
    struct jpeg_compress_struct c; struct jpeg_error_mgr e;
    FILE *f = fopen(path, "wb");
    c.err = jpeg_std_error(&e); jpeg_create_compress(&c); jpeg_stdio_dest(&c, f);
    c.image_width = w; c.image_height = h; c.input_components = 4; c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c); jpeg_set_colorspace(&c, space); jpeg_set_quality(&c, 95, TRUE);
    c.write_Adobe_marker = TRUE;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < (unsigned)h) { JSAMPROW r = cmyk + c.next_scanline * w * 4; jpeg_write_scanlines(&c, &r, 1); }
    jpeg_finish_compress(&c); jpeg_destroy_compress(&c); fclose(f);
}

int main(void) {
    FILE *f = fopen("djpeg/testorig.ppm", "rb"); int w, h, max;
    if (!f || fscanf(f, "P6 %d %d %d", &w, &h, &max) != 3) return 1;
    fgetc(f);
    unsigned char *rgb = malloc(w * h * 3), *cmyk = malloc(w * h * 4);
    if (fread(rgb, 3, w * h, f) != (size_t)(w * h)) return 1;
    for (int i = 0; i < w * h; i++) {
        int r = rgb[i*3], g = rgb[i*3+1], b = rgb[i*3+2];
        int mx = r > g ? (r > b ? r : b) : (g > b ? g : b), k = 255 - mx;
        int cc = k == 255 ? 0 : (255 - r - k) * 255 / (255 - k);
        int mm = k == 255 ? 0 : (255 - g - k) * 255 / (255 - k);
        int yy = k == 255 ? 0 : (255 - b - k) * 255 / (255 - k);
        cmyk[i*4] = 255 - cc; cmyk[i*4+1] = 255 - mm; cmyk[i*4+2] = 255 - yy; cmyk[i*4+3] = 255 - k;
    }
    write_jpeg("cmyk.jpg", JCS_CMYK, cmyk, w, h);
    write_jpeg("ycck.jpg", JCS_YCCK, cmyk, w, h);
    return 0;
}
