#!/usr/bin/env bash
# Makes the frame-count fixtures (FrameCountTests, see ../SOURCES.md) with real
# encoders, and frames.txt: each GIF/WebP fixture's frame count as the reference
# tools give it. Needs: ImageMagick 6 (convert, identify), gifsicle, webp
# (cwebp, gif2webp, img2webp, webpmux). Run from anywhere: ./make-animated-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Three solid frames; one solid frame.
convert -delay 10 -size 16x16 xc:red xc:green xc:blue anim3.gif
convert -size 16x16 xc:red still.gif
# 40 frames of a moving gradient square, optimised by gifsicle into sub-rectangles with
# local colour tables, a comment and a looping NETSCAPE extension (more blocks per frame).
for i in $(seq 0 39); do
  convert -size 32x24 xc:white -fill "hsl($((i * 9)),90%,50%)" -draw "rectangle $((i % 20)),4 $((i % 20 + 10)),18" "$tmp/f$(printf %02d "$i").gif"
done
gifsicle --loopcount=0 --delay 4 --comment "thumbd frame-count fixture" --optimize=3 "$tmp"/f*.gif > anim40.gif
gifsicle --interlace anim40.gif > anim40-interlaced.gif
# WebP: the GIFs converted (animated, lossless and lossy), the still ones.
gif2webp -quiet anim3.gif -o anim3.webp
gif2webp -quiet -lossy -q 60 anim40.gif -o anim40-lossy.webp
convert -size 16x16 gradient:red-blue "$tmp/still.png"
cwebp -quiet -q 80 "$tmp/still.png" -o still-lossy.webp
cwebp -quiet -lossless "$tmp/still.png" -o still-lossless.webp
# The reference counts, for every GIF and WebP fixture (paths relative to Fixtures/).
cd ..
for f in $(find . -path ./animated/make-animated-fixtures.sh -prune -o \( -name '*.gif' -o -name '*.webp' \) -print | sed 's|^\./||' | sort); do
  case "$f" in
    *.gif) n=$(identify "$f" | wc -l); g=$(gifsicle --info "$f" | sed -n 's/.* \([0-9]*\) images\{0,1\}$/\1/p' | head -1)
           [ "$n" = "$g" ] || { echo "identify $n, gifsicle $g: $f" >&2; exit 1; } ;;
    *.webp) n=$(webpmux -info "$f" | sed -n 's/^Number of frames: \([0-9]*\)$/\1/p'); n=${n:-1} ;;
  esac
  echo "$f $n"
done > animated/frames.txt
