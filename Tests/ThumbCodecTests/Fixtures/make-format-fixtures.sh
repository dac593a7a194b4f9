#!/usr/bin/env bash
# Makes the generated WebP/GIF/AVIF/HEIC fixtures (see SOURCES.md) from other
# fixtures here. Needs: Pillow, webp (cwebp, webpmux), giflib-tools (gifbuild),
# libavif-bin (avifenc 0.11.1, aom), libheif-examples (heif-enc 1.15.1, x265), ImageMagick.
# Run from this folder: ./make-format-fixtures.sh   then: python3 make-format-reference.py
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# A TIFF (big-endian) whose IFD0 holds only Orientation = $1, as a WebP EXIF chunk payload.
exif() { printf 'MM\0*\0\0\0\10\0\1\1\22\0\3\0\0\0\1\0%b\0\0\0\0\0\0' "\\$(printf %03o "$1")"; }

# WebP with EXIF orientation: orient-N.png's pixels, lossless, tagged N.
for n in 1 2 3 4 5 6 7 8; do
  cwebp -quiet -lossless -exact orient/orient-$n.png -o "$tmp/o.webp"
  exif $n > "$tmp/exif.bin"
  webpmux -set exif "$tmp/exif.bin" "$tmp/o.webp" -o orient/orient-$n.webp >/dev/null
done
# The same with JPEG's "Exif\0\0" prefix kept in the chunk, as some writers do.
{ printf 'Exif\0\0'; exif 6; } > "$tmp/exif.bin"
cwebp -quiet -lossless -exact orient/orient-6.png -o "$tmp/o.webp"
webpmux -set exif "$tmp/exif.bin" "$tmp/o.webp" -o formats/orient-6-exif-prefix.webp >/dev/null

python3 - "$tmp" <<'PY'
import sys
from PIL import Image, ImageDraw
tmp = sys.argv[1]
photo = Image.open("rocket.jpg").convert("RGB").resize((160, 107), Image.LANCZOS)
# GIF: a photo quantised to 255 colours plus a transparent ellipse (index 255).
pal = photo.quantize(colors=255, dither=Image.Dither.NONE)
mask = Image.new("L", pal.size, 0)
ImageDraw.Draw(mask).ellipse((20, 15, 70, 60), fill=255)
pal.paste(255, mask=mask)
pal.save("formats/photo-transparent.gif", transparency=255, interlace=False, optimize=False)
pal.save("formats/photo-interlaced.gif", transparency=255, interlace=True, optimize=False)
# RGBA sources for AVIF/HEIC/animated WebP: the photo with a soft-edged alpha ramp and a hole.
alpha = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90).resize(photo.size)
ImageDraw.Draw(alpha).ellipse((90, 20, 140, 70), fill=0)
rgba = photo.copy(); rgba.putalpha(alpha)
rgba.save(f"{tmp}/rgba.png")
photo.save(f"{tmp}/photo.png")
# Animated WebP frames: a 40x30 translucent crop, then a full 64x48 frame.
rgba.crop((0, 0, 40, 30)).save(f"{tmp}/f1.png")
photo.crop((50, 30, 114, 78)).save(f"{tmp}/f2.png")
PY

# Animated WebP: first frame 40x30 at (10,8) on a 64x48 canvas, blended; second frame full.
cwebp -quiet -q 90 -alpha_q 100 "$tmp/f1.png" -o "$tmp/f1.webp"
cwebp -quiet -q 90 "$tmp/f2.png" -o "$tmp/f2.webp"
webpmux -frame "$tmp/f1.webp" +100+10+8+0+b -frame "$tmp/f2.webp" +100+0+0+0-b -loop 0 -bgcolor 255,255,255,255 \
  -o formats/animated.webp >/dev/null
# Lossy WebP with alpha made here (the corpus one is 128x128 with filtered alpha).
cwebp -quiet -q 80 -alpha_q 100 "$tmp/rgba.png" -o formats/photo-alpha.webp

# Animated GIF: a 24x16 screen whose first frame is 12x8 at (4,3), interlaced,
# with index 3 transparent; the second frame fills the screen.
{
  echo "screen width 24"; echo "screen height 16"; echo "screen colors 4"; echo "screen background 0"
  echo "screen map"; echo "rgb 224 16 16 is r"; echo "rgb 16 192 16 is g"; echo "rgb 16 16 224 is b"
  echo "rgb 240 240 240 is w"; echo "end"; echo "netscape loop 0"
  echo "graphics control"; echo "disposal mode 0"; echo "delay 10"; echo "transparent index 3"; echo "end"
  echo "image"; echo "image left 4"; echo "image top 3"; echo "image interlaced"; echo "image bits 12 by 8"
  for y in 0 1 2 3 4 5 6 7; do
    row=""; for x in 0 1 2 3 4 5 6 7 8 9 10 11; do
      if [ $(( (x + y) % 5 )) -eq 0 ]; then row+="w"; elif [ $x -lt 6 ]; then row+="r"; elif [ $y -lt 4 ]; then row+="g"; else row+="b"; fi
    done; echo "$row"
  done
  echo "graphics control"; echo "disposal mode 0"; echo "delay 10"; echo "transparent index 0"; echo "end"
  echo "image"; echo "image bits 24 by 16"
  for y in $(seq 16); do echo "gggggggggggggggggggggggg"; done
} | gifbuild > formats/animated.gif

# AVIF with alpha (4:2:0, 8-bit), 10-bit, and with irot/imir plus an Exif orientation that must be ignored.
avifenc -s 6 -y 420 --min 20 --max 20 --minalpha 0 --maxalpha 0 "$tmp/rgba.png" formats/photo-alpha.avif >/dev/null
avifenc -s 6 -d 10 -y 420 --min 20 --max 20 "$tmp/photo.png" formats/photo-10bit.avif >/dev/null
exif 6 > "$tmp/exif.bin"
avifenc -s 6 -y 444 --min 20 --max 20 --irot 1 --imir 0 --exif "$tmp/exif.bin" "$tmp/photo.png" \
  formats/photo-irot1-imir0-exif6.avif >/dev/null
# One AV1 payload, plain and with irot, imir or clap (AVIFDecoderTests compares them exactly).
avifenc -s 6 -y 420 --min 20 --max 20 "$tmp/photo.png" formats/photo-420.avif >/dev/null
avifenc -s 6 -y 420 --min 20 --max 20 --irot 3 "$tmp/photo.png" formats/photo-irot3.avif >/dev/null
avifenc -s 6 -y 420 --min 20 --max 20 --imir 1 "$tmp/photo.png" formats/photo-imir1.avif >/dev/null
mkdir -p formats/avif-extra
avifenc -s 6 -y 420 --min 20 --max 20 --crop 8,6,140,90 "$tmp/photo.png" formats/avif-extra/photo-clap.avif >/dev/null
# Premultiplied alpha, 12-bit, and a 2×1 grid (tiles must have even sides: the photo cut to 160×106).
avifenc -s 6 -y 420 --min 20 --max 20 --minalpha 0 --maxalpha 0 -p "$tmp/rgba.png" formats/photo-premultiplied.avif >/dev/null
avifenc -s 6 -d 12 -y 444 --min 20 --max 20 "$tmp/photo.png" formats/photo-12bit.avif >/dev/null
convert "$tmp/photo.png" -crop 160x106+0+0 +repage "$tmp/photo106.png"
avifenc -s 6 -y 420 --min 20 --max 20 -g 2x1 "$tmp/photo106.png" formats/photo-grid.avif >/dev/null
# An image sequence (red, then blue), and the same with no primary item (pitm renamed free).
convert -size 64x48 xc:red "$tmp/red.png"; convert -size 64x48 xc:blue "$tmp/blue.png"
avifenc -s 9 "$tmp/red.png" "$tmp/blue.png" formats/avif-extra/sequence.avif >/dev/null
python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d.replace(b'pitm', b'free', 1))" \
  formats/avif-extra/sequence.avif formats/avif-extra/sequence-no-primary-item.avif
# HEIC with alpha (x265 via heif-enc), and 10-bit from a 16-bit PNG.
heif-enc -q 80 "$tmp/rgba.png" -o formats/photo-alpha.heic >/dev/null
convert "$tmp/photo.png" -depth 16 PNG48:"$tmp/photo16.png"
heif-enc -q 80 -b 10 "$tmp/photo16.png" -o formats/photo-10bit.heic >/dev/null
