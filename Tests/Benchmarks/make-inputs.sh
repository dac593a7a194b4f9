#!/usr/bin/env bash
# Makes the standard benchmark inputs into OUT_DIR from this repository's own photo
# fixtures (Tests/ThumbCodecTests/Fixtures, provenance in its SOURCES.md), with nothing
# from outside the clone; idempotent (a file already made is kept), and remade whole
# when this script's commands or pngdecode.c change (OUT_DIR/.recipe holds the SHA-256 of
# both, this script's comment lines left out).
#
# Every other script in Tests/Benchmarks calls it (lib.sh: bench_inputs); by hand, from a
# fresh clone (any directory):
#   git clone URL thumbd && cd thumbd
#   Tests/Benchmarks/make-inputs.sh [--formats] [OUT_DIR]   (OUT_DIR default: .build-bench-inputs
#                                                            at the repository root)
# It installs what it needs when absent (bash .ci/deps.sh, Debian): libvips-tools,
# libjpeg-turbo-progs, gcc (and webp, libavif-bin, libheif-examples for --formats).
# It takes about 15 s on 2 cores (--formats: about a minute more, for the AVIF and HEIC encodes).
#
# The photos. "12 MP photo": a 2x2 mosaic, 4224x3168, of four fixtures, each resized
# with libvips' Lanczos-3 to cover a 2112x1584 tile and cropped to it around its centre
# (vips thumbnail --crop centre --size both; each is scaled 1.65-2.2x):
#     top left      formats/crowd_1440x960.heic: a street crowd, 1440x960
#     top right     formats/Link-U-fox.profile1.8bpc.yuv444.avif: fox statues in leaves, 1204x800
#     bottom left   formats/Microsoft-still_picture.avif: a church and trees, 1280x720
#     bottom right  formats/Netflix-avif-sdr_cosmos07296_cicp1-13-6_yuv444_full_qp40.avif:
#                   a frame of the film Cosmos Laundromat (hair and beard), 2048x858
#   "4 MP photo": the fox alone, resized the same way to cover 2560x1600 (2.13x) and cropped.
#   To each, grain: one band of Gaussian noise (vips gaussnoise, sigma 1, mean 0, fixed seed)
#   added to all three bands, clipped to 8 bits. The upscaling softens the fixtures; the
#   grain puts back sensor-like high-frequency detail, so that the JPEGs cost what the
#   12 MP and 4 MP camera photos these benchmarks used before cost (Dragonfly_by_Bolly.jpg,
#   4224x3168 progressive, 1.52 MB; LadyBird.jpg, 2560x1600 baseline, 352 KB): the CPU time
#   of djpeg's full and 1/8-scale decodes of each JPEG below is within 5 % of theirs (medians
#   of 41 runs, libjpeg-turbo 2.1.5).
#
# The inputs:
#   jpeg-12mp-progressive.jpg  the 12 MP photo, cjpeg -quality 85 -sample 2x1 (4:2:2)
#                              -progressive -optimize (about 1.5 MB)
#   jpeg-12mp-baseline.jpg     the same losslessly re-coded to baseline (jpegtran -copy all:
#                              same DCT coefficients, sequential scans)
#   jpeg-4mp.jpg               the 4 MP photo, cjpeg -quality 85 -sample 2x2 (4:2:0), baseline
#                              (about 420 KB)
#   png-12mp-rgb.png           the 12 MP photo (its pixels before JPEG coding) as 8-bit RGB PNG
#                              (libvips, compression 6; about 25 MB)
#   png-12mp-rgba.png          the same with a radial alpha ramp (opaque in the middle, clear
#                              towards the corners), 8-bit RGBA PNG (about 32 MB)
#   thumb-20k.jpg              vipsthumbnail of jpeg-12mp-progressive.jpg to 288x216, Q 85
#                              (about 19 KB; the body of the static-serving comparisons)
#   pngdecode                  the libpng decode floor, compiled from Tests/Benchmarks/pngdecode.c
# With --formats (codec-bench.sh), the 12 MP photo in the other input formats, each encoded
# from jpeg-12mp-baseline.jpg:
#   webp-12mp.webp             cwebp -q 82 (lossy)
#   webp-12mp-p3.webp          the same carrying the Display P3 ICC profile of
#                              Fixtures/icc/display-p3.icc (webpmux -set icc; API.md § Output "Colour")
#   avif-12mp.avif             avifenc -s 6 --min 20 --max 30 (aom)
#   heic-12mp.heic             heif-enc -q 80 (x265)
#   heic-12mp-grid.heic        the shape iPhones write: 4032x3024 as an 8x6 grid of 512x512 HEVC
#                              tiles, each heif-enc -q 80 of a 512x512 crop (vips crop) of the
#                              photo's top-left 4096x3072, put together by heic_grid.py
set -euo pipefail
FORMATS=0
[ "${1:-}" = --formats ] && { FORMATS=1; shift; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/.build-bench-inputs}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
FIX=$ROOT/Tests/ThumbCodecTests/Fixtures
tools=(libvips-tools libjpeg-turbo-progs gcc)
[ $FORMATS = 1 ] && tools+=(webp libavif-bin libheif-examples)
bash "$ROOT/.ci/deps.sh" "${tools[@]}" >&2
export VIPS_WARNING=0   # libvips' heifload notes that it ignores the AVIFs' nclx boxes (they say sRGB)

exec 9>"$OUT/.lock"; flock 9   # two benchmarks started at once make the inputs once
recipe=$({ grep -v '^ *#' "$0"; cat "$ROOT/Tests/Benchmarks/pngdecode.c" "$ROOT/Tests/Benchmarks/heic_grid.py"; } | sha256sum | cut -d" " -f1)
if [ "$(cat "$OUT/.recipe" 2>/dev/null)" != "$recipe" ]; then
  # Made by another recipe (an older version of this script, or another script): start again.
  rm -f "$OUT"/jpeg-12mp-*.jpg "$OUT/jpeg-4mp.jpg" "$OUT"/png-12mp-*.png "$OUT/thumb-20k.jpg" "$OUT/pngdecode" \
        "$OUT"/webp-12mp*.webp "$OUT/avif-12mp.avif" "$OUT"/heic-12mp*.heic
  echo "$recipe" > "$OUT/.recipe"
fi
T=$(mktemp -d "$OUT/.tmp.XXXXXX"); trap 'rm -rf "$T"' EXIT
made() { [ -s "$OUT/$1" ]; }
keep() { mv "$T/$1" "$OUT/$1"; }   # each input appears whole or not at all

# grain IN OUT.ppm SEED: IN plus Gaussian grain (sigma 1) on all bands, 8-bit, as PPM.
grain() {
  local w h
  w=$(vipsheader -f width "$1"); h=$(vipsheader -f height "$1")
  vips gaussnoise "$T/noise.v" "$w" "$h" --sigma 1 --mean 0 --seed "$3"
  vips add "$1" "$T/noise.v" "$T/sum.v"
  vips cast "$T/sum.v" "$2" uchar   # clips to 0…255
}
photo12() { # the 12 MP photo as PPM (made once per run)
  [ -s "$T/photo-12mp.ppm" ] && return
  local tiles=() i=0 src
  for src in formats/crowd_1440x960.heic formats/Link-U-fox.profile1.8bpc.yuv444.avif \
             formats/Microsoft-still_picture.avif \
             formats/Netflix-avif-sdr_cosmos07296_cicp1-13-6_yuv444_full_qp40.avif; do
    vips thumbnail "$FIX/$src" "$T/tile$i.v" 2112 --height 1584 --crop centre --size both
    tiles+=("$T/tile$i.v"); i=$((i + 1))
  done
  vips arrayjoin "${tiles[*]}" "$T/mosaic.v" --across 2
  grain "$T/mosaic.v" "$T/photo-12mp.ppm" 12
}

if ! made jpeg-12mp-progressive.jpg; then
  photo12
  cjpeg -quality 85 -sample 2x1 -progressive -optimize -outfile "$T/jpeg-12mp-progressive.jpg" "$T/photo-12mp.ppm"
  keep jpeg-12mp-progressive.jpg
fi
if ! made jpeg-12mp-baseline.jpg; then
  jpegtran -copy all -outfile "$T/jpeg-12mp-baseline.jpg" "$OUT/jpeg-12mp-progressive.jpg"
  keep jpeg-12mp-baseline.jpg
fi
if ! made jpeg-4mp.jpg; then
  vips thumbnail "$FIX/formats/Link-U-fox.profile1.8bpc.yuv444.avif" "$T/fox.v" 2560 --height 1600 --crop centre --size both
  grain "$T/fox.v" "$T/photo-4mp.ppm" 4
  cjpeg -quality 85 -sample 2x2 -outfile "$T/jpeg-4mp.jpg" "$T/photo-4mp.ppm"
  keep jpeg-4mp.jpg
fi
if ! made png-12mp-rgb.png; then
  photo12
  vips copy "$T/photo-12mp.ppm" "$T/png-12mp-rgb.png[compression=6,strip]"
  keep png-12mp-rgb.png
fi
if ! made png-12mp-rgba.png; then
  photo12
  # Alpha = 1.6 x 255 x (1 - r / r_rms), clipped to 0…255: r is the distance from the centre,
  # r_rms = sqrt((2112² + 1584²) / 2) = 1867, so opaque within 700 px of the centre and clear
  # from 1867 px out (71 % of the way to a corner).
  vips xyz "$T/xy.v" 4224 3168
  vips linear -- "$T/xy.v" "$T/xyc.v" "1 1" "-2112 -1584"
  vips multiply "$T/xyc.v" "$T/xyc.v" "$T/sq.v"
  vips bandmean "$T/sq.v" "$T/m.v"
  vips math2_const "$T/m.v" "$T/r.v" pow 0.5
  vips linear -- "$T/r.v" "$T/a.v" "$(awk 'BEGIN{print -1.6*255/sqrt((2112^2+1584^2)/2)}')" "$(awk 'BEGIN{print 1.6*255}')"
  vips cast "$T/a.v" "$T/a8.v" uchar
  vips bandjoin "$T/photo-12mp.ppm $T/a8.v" "$T/rgba.v"
  vips copy "$T/rgba.v" "$T/png-12mp-rgba.png[compression=6,strip]"
  keep png-12mp-rgba.png
fi
if ! made thumb-20k.jpg; then
  vipsthumbnail "$OUT/jpeg-12mp-progressive.jpg" -s 288x288 -o "$T/thumb-20k.jpg[Q=85,strip]"
  keep thumb-20k.jpg
fi
if [ ! -x "$OUT/pngdecode" ]; then
  gcc -O2 -o "$T/pngdecode" "$ROOT/Tests/Benchmarks/pngdecode.c" -lpng
  keep pngdecode
fi
if [ $FORMATS = 1 ]; then
  B=$OUT/jpeg-12mp-baseline.jpg
  if ! made webp-12mp.webp; then cwebp -quiet -q 82 "$B" -o "$T/webp-12mp.webp"; keep webp-12mp.webp; fi
  if ! made webp-12mp-p3.webp; then
    webpmux -set icc "$FIX/icc/display-p3.icc" "$OUT/webp-12mp.webp" -o "$T/webp-12mp-p3.webp" >/dev/null 2>&1
    keep webp-12mp-p3.webp
  fi
  if ! made avif-12mp.avif; then avifenc -s 6 --min 20 --max 30 "$B" "$T/avif-12mp.avif" >/dev/null; keep avif-12mp.avif; fi
  if ! made heic-12mp.heic; then heif-enc -q 80 "$B" -o "$T/heic-12mp.heic" >/dev/null; keep heic-12mp.heic; fi
  if ! made heic-12mp-grid.heic; then
    mkdir "$T/tiles"
    for r in 0 1 2 3 4 5; do
      for c in 0 1 2 3 4 5 6 7; do
        vips crop "$B" "$T/tiles/crop.png" $((c * 512)) $((r * 512)) 512 512
        heif-enc -q 80 "$T/tiles/crop.png" -o "$T/tiles/tile-$r-$c.heic" >/dev/null
      done
    done
    python3 "$ROOT/Tests/Benchmarks/heic_grid.py" "$T/tiles" 8 6 4032 3024 "$T/heic-12mp-grid.heic"
    keep heic-12mp-grid.heic
  fi
fi
ls -l "$OUT"
