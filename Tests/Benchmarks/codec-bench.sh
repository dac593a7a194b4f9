#!/usr/bin/env bash
# Codec benchmark (issue 2): thumbd's decode+scale+encode against djpeg -scale 1/8,
# vipsthumbnail and a plain libpng decode (pngdecode.c), on the standard inputs of
# make-inputs.sh, in one run; and (issue 10) WebP, AVIF and HEIC made from the 12 MP JPEG
# (make-inputs.sh --formats), against vipsthumbnail and the libraries' own decoders as
# floors (dwebp, avifdec, heif-convert). Release build; medians of RUNS runs (hyperfine,
# and ThumbBench in process); peak RSS per process. Prints one table row per input and peer.
# Usage: Tests/Benchmarks/codec-bench.sh [RUNS]     (default 15; any directory)
# From a fresh clone (Debian, Swift 6; installs libvips-tools, libjpeg-turbo-progs,
# hyperfine, gcc, webp, libavif-bin, libheif-examples):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/codec-bench.sh
# A quick trial run: Tests/Benchmarks/codec-bench.sh 2
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
RUNS=${1:-15}
bash .ci/deps.sh libvips-tools libjpeg-turbo-progs hyperfine webp libavif-bin libheif-examples
bench_inputs --formats   # the WebP, AVIF and HEIC encodes take a minute the first time
swift build -c release --product thumbd >/dev/null
swift build -c release --product ThumbBench >/dev/null
BIN=$(swift build -c release --show-bin-path)
python3 Tests/Benchmarks/codec_bench.py --bin "$BIN" --inputs "$INPUTS" --runs "$RUNS"
