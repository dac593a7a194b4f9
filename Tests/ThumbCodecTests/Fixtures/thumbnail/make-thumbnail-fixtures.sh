#!/usr/bin/env bash
# Makes the embedded-thumbnail fixtures (see ../SOURCES.md, "Embedded thumbnails")
# from ../rocket.jpg. Needs: libheif-examples (heif-enc 1.15.1 with x265 and aom),
# ImageMagick, Pillow. Run from this folder: ./make-thumbnail-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The photo (640x427, Adobe RGB profile) with a 160x106 thumbnail item: HEIC (x265; the
# primary is a one-tile grid, as heif-enc writes an odd height) and AVIF (aom).
heif-enc -q 50 -t 160 ../rocket.jpg -o rocket-t160.heic >/dev/null
heif-enc -A -q 50 -t 160 ../rocket.jpg -o rocket-t160.avif >/dev/null

# The same primaries with a thumbnail stored turned 90 degrees clockwise and an irot
# (angle 1, anticlockwise) that turns it back: heif_splice.py takes the thumbnail of a
# file heif-enc made from the turned photo.
convert ../rocket.jpg -rotate 90 "$tmp/turned.png"
heif-enc -q 50 -t 160 "$tmp/turned.png" -o "$tmp/turned.heic" >/dev/null
heif-enc -A -q 50 -t 160 "$tmp/turned.png" -o "$tmp/turned.avif" >/dev/null
python3 heif_splice.py rocket-t160.heic "$tmp/turned.heic" rocket-t160-irot.heic
python3 heif_splice.py rocket-t160.avif "$tmp/turned.avif" rocket-t160-irot.avif

# Alpha: the photo at 320x214 with an alpha ramp and a clear hole; its thumbnail
# (80x52: libheif rounds 53.5 down to even) with alpha, and without (--no-thumb-alpha).
python3 - "$tmp" <<'PY'
import sys
from PIL import Image, ImageDraw
photo = Image.open("../rocket.jpg").convert("RGB").resize((320, 214), Image.LANCZOS)
alpha = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90).resize(photo.size)
ImageDraw.Draw(alpha).ellipse((180, 40, 280, 140), fill=0)
photo.putalpha(alpha)
photo.save(sys.argv[1] + "/rgba.png")
PY
heif-enc -q 60 -t 80 "$tmp/rgba.png" -o alpha-t80.heic >/dev/null
heif-enc -q 60 -t 80 --no-thumb-alpha "$tmp/rgba.png" -o alpha-t80-opaque-thumbnail.heic >/dev/null
heif-enc -A -q 60 -t 80 "$tmp/rgba.png" -o alpha-t80.avif >/dev/null
