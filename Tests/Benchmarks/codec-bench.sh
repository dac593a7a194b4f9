#!/usr/bin/env bash
# Codec benchmark (issue 2): thumbd's decode+scale+encode against djpeg -scale 1/8,
# vipsthumbnail and a plain libpng decode, on the standard inputs, in one run.
# Release build; medians of repeated runs; peak RSS per process.
# Usage: Tests/Benchmarks/codec-bench.sh [RUNS]     (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-15}
bash .ci/deps.sh libvips-tools libjpeg-turbo-progs hyperfine gcc
INPUTS="$PWD/.build-bench-inputs"   # absolute: vipsthumbnail -o resolves relative names against the input's folder
bash ../shared/bench/make-inputs.sh "$INPUTS" >/dev/null
swift build -c release --product thumbd >/dev/null
swift build -c release --product ThumbBench >/dev/null
BIN=$(swift build -c release --show-bin-path)
python3 Tests/Benchmarks/codec_bench.py --bin "$BIN" --inputs "$INPUTS" --runs "$RUNS"
