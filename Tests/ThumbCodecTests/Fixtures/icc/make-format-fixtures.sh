#!/usr/bin/env bash
# WebP, AVIF and HEIC colour fixtures (API.md § Output "Colour"), from the same
# pixels as make-fixtures.py's (testorig.jpg as Pillow decodes it), all encoded
# losslessly so that the existing Pillow ImageCms references in ref/ apply
# unchanged; then make-format-references.py for the nclx cases lcms cannot express.
# Needs: webp (cwebp, webpmux), libavif-bin (avifenc, aom), libheif-examples
# (heif-enc, x265), python3 with Pillow and numpy. Run in this folder.
set -euo pipefail
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 - "$T" <<'PY'
import sys
from PIL import Image
t = sys.argv[1]
testorig = Image.open("../testorig.jpg").convert("RGB")
testorig.save(f"{t}/testorig.png")
rgba = testorig.copy()
rgba.putalpha(Image.linear_gradient("L").resize(testorig.size))
rgba.save(f"{t}/rgba.png")
Image.open("p3-testorig.png").save(f"{t}/p3-testorig.png", icc_profile=open("display-p3.icc", "rb").read())
# Ramps for the HDR transfers: each row band one hue, value 0…255 left to right.
ramp = Image.new("RGB", (256, 64))
for x in range(256):
    for y in range(64):
        ramp.putpixel((x, y), [(x, x, x), (x, x // 2, 0), (0, x, x // 3), (x // 4, 0, x)][y // 16])
ramp.save(f"{t}/ramp.png")
ramp.save("formats/ramp.png")
PY
# WebP: lossless, ICCP chunk added by webpmux.
cwebp -quiet -lossless -exact "$T/testorig.png" -o "$T/a.webp"
webpmux -set icc display-p3.icc "$T/a.webp" -o formats/p3-icc.webp 2>/dev/null
cwebp -quiet -lossless -exact "$T/rgba.png" -o "$T/b.webp"
webpmux -set icc rgb-lut.icc "$T/b.webp" -o formats/lut-icc-rgba.webp 2>/dev/null
# AVIF: lossless (identity matrix, 4:4:4), ICC or nclx colr box.
avifenc -l --icc display-p3.icc "$T/testorig.png" formats/p3-icc.avif >/dev/null
avifenc -l --cicp 12/13/0 "$T/testorig.png" formats/p3-nclx.avif >/dev/null
avifenc -l --cicp 9/13/0 "$T/testorig.png" formats/bt2020-nclx.avif >/dev/null
avifenc -l --cicp 9/16/0 "$T/ramp.png" formats/pq-nclx-ramp.avif >/dev/null
avifenc -l --cicp 9/18/0 "$T/ramp.png" formats/hlg-nclx-ramp.avif >/dev/null
avifenc -l --icc display-p3.icc --cicp 9/13/0 "$T/testorig.png" formats/p3-icc-bt2020-nclx.avif >/dev/null
# HEIC: x265 "lossless" in RGB 4:4:4 (heif-enc 1.15 leaves values off by at
# most 1); the ICC comes from the PNG's iCCP. heif-enc 1.15 writes no nclx
# colr box for HEVC, so the nclx cases are AVIF only (libheif reads both the same way).
heif-enc -L -p chroma=444 --matrix_coefficients=0 "$T/p3-testorig.png" -o formats/p3-icc.heic >/dev/null
python3 make-format-references.py
