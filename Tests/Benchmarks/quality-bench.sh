#!/usr/bin/env bash
# Bytes at equal quality against libvips (issue 36, item 5; Results.md § Bytes at equal
# quality). The photos of Tests/Benchmarks/quality-corpus are rendered by thumbd's scaler to
# 512 px on the long side (ThumbBench --renditions, lossless PNG); libvips 8.14 (Debian's
# libvips42, the same libavif/libheif/aom generation, through PyPI pyvips in ABI mode) and
# libvips 8.18 (PyPI pyvips + pyvips-binary) save those PNGs at imgproxy's defaults (jpeg 80,
# webp 79, avif 63, metadata stripped; jxl 77 at effort 4 where the libvips has jxlsave — Debian's
# 8.14 on thumbd's libjxl 0.7, not the 8.18 wheel; quality_bench.py). Every output is scored with
# thumbd's SSIMULACRA2 against the same PNG, so only the encoder is judged; per image, thumbd's
# lowest q reaching libvips' score is found by bisection and its bytes interpolated at exactly
# that score (ThumbBench --versus); the ratio thumbd/libvips is reported per image and as the
# median over the corpus. CPU: one encode per 512-px image (process CPU time, libvips' threads
# included), thumbd at q 80 beside libvips at its defaults, in ROUNDS alternating rounds
# (default 9), medians and the median of the rounds' ratios.
# Usage: Tests/Benchmarks/quality-bench.sh [ROUNDS]   (any directory; prints the commit it ran on)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-9}
bash .ci/deps.sh libvips42
WORK=${QUALITY_BENCH_WORK:-/tmp/thumbd-quality-bench}
mkdir -p "$WORK/out"
echo "thumbd commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
for v in vips814 vips818; do
  if [ ! -x "$WORK/$v/bin/python" ]; then
    python3 -m venv "$WORK/$v"
    if [ $v = vips814 ]; then "$WORK/$v/bin/pip" install -q pyvips; else "$WORK/$v/bin/pip" install -q pyvips pyvips-binary; fi
  fi
  "$WORK/$v/bin/python" -c "import pyvips; print('$v: libvips', pyvips.version(0), pyvips.version(1), pyvips.version(2))"
done
swift build -c release --product ThumbBench >/dev/null
B=.build/release/ThumbBench
photos=(Tests/Benchmarks/quality-corpus/*.jpg)
rm -f "$WORK"/out/*
$B --renditions "$WORK/out" "${photos[@]}"
for v in vips814 vips818; do "$WORK/$v/bin/python" Tests/Benchmarks/quality_bench.py encode $v "$WORK/out"; done
SVT_LOG=1 $B --versus "$WORK/out" --labels vips814,vips818 "${photos[@]}"

: > "$WORK/cpu.txt"
for r in $(seq 1 "$ROUNDS"); do
  $B --encode-cpu 80 "$WORK"/out/*.png | sed "s/^/$r thumbd /" >> "$WORK/cpu.txt"
  for v in vips814 vips818; do
    "$WORK/$v/bin/python" Tests/Benchmarks/quality_bench.py cpu "$WORK/out" | sed "s/^/$r $v /" >> "$WORK/cpu.txt"
  done
done
python3 Tests/Benchmarks/quality_bench.py summary "$WORK/cpu.txt"
