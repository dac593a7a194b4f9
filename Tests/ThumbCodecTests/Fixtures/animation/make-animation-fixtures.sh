#!/usr/bin/env bash
# Makes the animation fixtures (AnimationDecoderTests, AnimatedWebPEncoderTests,
# AnimationRenderTests; see README.md): copies small animations from other
# projects' test suites at pinned commits, builds one GIF with every disposal
# by hand (gifbuild, giflib-tools 5.2.1), and then runs make-animation-references.py
# for Pillow's composited frames.
# Usage: ./make-animation-fixtures.sh LIBVIPS_CLONE SHARP_CLONE PYTHON_WITH_PILLOW
set -euo pipefail
libvips=$1 sharp=$2 python=$3
cd "$(dirname "$0")"

# libvips test suite (LGPL-2.1+): GIF disposal "background" and "previous", and cogs.gif.
for f in cogs.gif dispose-background.gif dispose-previous.gif; do
  git -C "$libvips" show 29fd12021b279dee0d22223e11686f7d61dcd541:test/test-suite/images/$f > "$f"
done
# sharp test fixtures (Apache-2.0): sub-rectangle frames at offsets with a
# NETSCAPE loop count of 2; 30 frames with local colour tables and disposal
# "background"; and their animated WebP conversions.
for f in animated-loop-3.gif animated-loop-3.webp rotating-squares.gif rotating-squares.webp; do
  git -C "$sharp" show ea5bef24c187b2c7ee3fe3cad3b45c8cb67a46fd:test/fixtures/$f > "$f"
done
# Interlaced frames: the same 30 frames, interlaced by gifsicle 1.93.
gifsicle --interlace rotating-squares.gif > rotating-squares-interlaced.gif 2>/dev/null

# Every disposal method on a 32x24 screen, no NETSCAPE extension (plays once):
#   0: whole screen, index 0 transparent (holes), disposal 1 (keep), delay 0 (shown 100 ms)
#   1: 12x10 at (4,3), interlaced, local 4-colour table, index 3 transparent,
#      disposal 2 (cleared to transparent), delay 1 (shown 100 ms)
#   2: 10x8 at (18,12), opaque, disposal 3 (restore previous), delay 2 (20 ms)
#   3: 16x12 at (8,6), interlaced, index 7 transparent, disposal 4 (read as
#      "previous" by browsers and Pillow), delay 5
#   4: 8x8 at (24,16), opaque, disposal 1, delay 10
#   5: 6x6 at (0,0), opaque, disposal 1, delay 7
# Every frame names its disposal: Pillow keeps the last non-zero one for a frame that gives 0.
{
  echo "screen width 32"; echo "screen height 24"; echo "screen colors 8"; echo "screen background 0"
  echo "screen map"
  echo "rgb 0 0 0 is k"; echo "rgb 230 30 30 is r"; echo "rgb 30 200 30 is g"; echo "rgb 40 40 230 is b"
  echo "rgb 240 220 20 is y"; echo "rgb 20 210 220 is c"; echo "rgb 210 30 210 is m"; echo "rgb 250 250 250 is w"
  echo "end"
  echo "graphics control"; echo "disposal mode 1"; echo "delay 0"; echo "transparent index 0"; echo "end"
  echo "image"; echo "image bits 32 by 24"
  for y in $(seq 0 23); do
    row=""; for x in $(seq 0 31); do
      if [ $(( (x / 4 + y / 4) % 3 )) -eq 0 ] && [ $x -gt 20 ]; then row+="k"
      else case $(( (x + 2 * y) / 5 % 4 )) in 0) row+="r";; 1) row+="g";; 2) row+="b";; 3) row+="y";; esac; fi
    done; echo "$row"
  done
  echo "graphics control"; echo "disposal mode 2"; echo "delay 1"; echo "transparent index 3"; echo "end"
  echo "image"; echo "image left 4"; echo "image top 3"; echo "image interlaced"
  echo "image map"; echo "rgb 255 128 0 is o"; echo "rgb 128 0 255 is p"; echo "rgb 0 128 128 is t"; echo "rgb 50 50 50 is z"; echo "end"
  echo "image bits 12 by 10"
  for y in $(seq 0 9); do
    row=""; for x in $(seq 0 11); do
      if [ $(( (x * y) % 7 )) -eq 3 ]; then row+="z"; else case $(( (x + y) % 3 )) in 0) row+="o";; 1) row+="p";; 2) row+="t";; esac; fi
    done; echo "$row"
  done
  echo "graphics control"; echo "disposal mode 3"; echo "delay 2"; echo "end"
  echo "image"; echo "image left 18"; echo "image top 12"; echo "image bits 10 by 8"
  for y in $(seq 0 7); do
    row=""; for x in $(seq 0 9); do if [ $(( (x + y) % 2 )) -eq 0 ]; then row+="c"; else row+="m"; fi; done; echo "$row"
  done
  echo "graphics control"; echo "disposal mode 4"; echo "delay 5"; echo "transparent index 7"; echo "end"
  echo "image"; echo "image left 8"; echo "image top 6"; echo "image interlaced"; echo "image bits 16 by 12"
  for y in $(seq 0 11); do
    row=""; for x in $(seq 0 15); do
      if [ $(( (x - 8) * (x - 8) + (y - 6) * (y - 6) )) -gt 30 ]; then row+="w"; elif [ $x -lt 8 ]; then row+="m"; else row+="c"; fi
    done; echo "$row"
  done
  echo "graphics control"; echo "disposal mode 1"; echo "delay 10"; echo "end"
  echo "image"; echo "image left 24"; echo "image top 16"; echo "image bits 8 by 8"
  for y in $(seq 0 7); do echo "yyyyrrrr"; done
  echo "graphics control"; echo "disposal mode 1"; echo "delay 7"; echo "end"
  echo "image"; echo "image bits 6 by 6"
  for y in $(seq 0 5); do echo "wbwbwb"; done
} | gifbuild > disposals.gif

"$python" make-animation-references.py
