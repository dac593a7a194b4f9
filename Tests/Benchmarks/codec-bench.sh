#!/usr/bin/env bash
# Codec benchmark (issue 2): thumbd's decode+scale+encode against djpeg -scale 1/8,
# vipsthumbnail and a plain libpng decode, on the standard inputs, in one run; and
# (issue 10) WebP, AVIF and HEIC made here from the 12 MP JPEG, against vipsthumbnail
# and the libraries' own decoders as floors (dwebp, avifdec, heif-convert).
# Release build; medians of repeated runs; peak RSS per process.
# Usage: Tests/Benchmarks/codec-bench.sh [RUNS]     (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-15}
bash .ci/deps.sh libvips-tools libjpeg-turbo-progs hyperfine gcc webp libavif-bin libheif-examples
INPUTS="$PWD/.build-bench-inputs"   # absolute: vipsthumbnail -o resolves relative names against the input's folder
bash ../shared/bench/make-inputs.sh "$INPUTS" >/dev/null
# The modern-format inputs (made once; the encodes take a minute): the same photo
# as lossy WebP (q 82), AVIF (aom, quantizer 20…30, speed 6) and HEIC (x265 q 80),
# and the WebP again carrying a Display P3 ICC profile (API.md § Output "Colour").
ICC_P3="Tests/ThumbCodecTests/Fixtures/icc/display-p3.icc"
[ -s "$INPUTS/webp-12mp.webp" ] || cwebp -quiet -q 82 "$INPUTS/jpeg-12mp-baseline.jpg" -o "$INPUTS/webp-12mp.webp"
[ -s "$INPUTS/webp-12mp-p3.webp" ] || webpmux -set icc "$ICC_P3" "$INPUTS/webp-12mp.webp" -o "$INPUTS/webp-12mp-p3.webp" 2>/dev/null
[ -s "$INPUTS/avif-12mp.avif" ] || avifenc -s 6 --min 20 --max 30 "$INPUTS/jpeg-12mp-baseline.jpg" "$INPUTS/avif-12mp.avif" >/dev/null
[ -s "$INPUTS/heic-12mp.heic" ] || heif-enc -q 80 "$INPUTS/jpeg-12mp-baseline.jpg" -o "$INPUTS/heic-12mp.heic" >/dev/null
swift build -c release --product thumbd >/dev/null
swift build -c release --product ThumbBench >/dev/null
BIN=$(swift build -c release --show-bin-path)
python3 Tests/Benchmarks/codec_bench.py --bin "$BIN" --inputs "$INPUTS" --runs "$RUNS"
