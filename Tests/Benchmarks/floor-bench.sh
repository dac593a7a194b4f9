#!/usr/bin/env bash
# The decoders' floor (issue 39), in one run: CPU per 256-px JPEG thumbnail of each input
# of make-inputs.sh --formats for thumbd (misses from disk: the daemon's CPU and its worker
# processes', per render; memoryCacheBytes 0, a different w per request), libvips 8.18 from
# PyPI (pyvips + pyvips-binary, in a venv this script makes in .venv-bench) and Debian's
# libvips 8.14 (libvips-tools' libvips42 through pyvips alone, in .venv-bench/debian:
# bookworm has no python3-pyvips), both in process (thumbnail_buffer + jpegsave_buffer,
# VIPS_CONCURRENCY=1, operation cache off); then the wall time of one cold 12 MP HEIC grid
# request (w=256, a source the daemon never saw) on an idle daemon. maxRenderSeconds is 300:
# on a loaded host a 12 MP HEIC may take longer than the default 10 s.
# ROUNDS alternating rounds (the order of the three changes each round) of RENDERS
# thumbnails each; prints medians as a Markdown table (Results.md § The decoders' floor).
# Usage: Tests/Benchmarks/floor-bench.sh [ROUNDS] [RENDERS]   (default 9 rounds of 5; any directory)
# From a fresh clone (Debian, Swift 6; installs libvips-tools, python3-venv,
# libjpeg-turbo-progs, gcc, webp, libavif-bin, libheif-examples):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/floor-bench.sh
# A quick trial run: Tests/Benchmarks/floor-bench.sh 1 2
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
ROUNDS=${1:-9} RENDERS=${2:-5}
bash .ci/deps.sh libvips-tools python3-venv libjpeg-turbo-progs webp libavif-bin libheif-examples
# venv DIR PACKAGE...: a venv that imports pyvips, made once and kept.
venv() {
  local dir=$1; shift
  if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/python" -c 'import pyvips' 2>/dev/null; then
    rm -rf "$dir" && python3 -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check "$@"
  fi
}
VENV=$PWD/.venv-bench
venv "$VENV" pyvips pyvips-binary
venv "$VENV/debian" pyvips
bench_inputs --formats
BIN=$(bench_release_bin)
bench_init
mkdir "$W/origin"
cp "$INPUTS"/{jpeg-4mp.jpg,jpeg-12mp-progressive.jpg,png-12mp-rgb.png,webp-12mp.webp,heic-12mp.heic,heic-12mp-grid.heic,avif-12mp.avif} "$W/origin/"
# The cold request's sources: the HEIC grid (an iPhone's shape, whose tiles libheif can decode
# on several threads) under names the daemon has not seen.
for r in $(seq 0 $((ROUNDS - 1))); do cp "$INPUTS/heic-12mp-grid.heic" "$W/origin/cold-$r.heic"; done
bench_origin "$W/origin" 18390
for side in warm cold; do
  port=18391; [ $side = cold ] && port=18392
  cat > "$W/$side.json" <<CONF
{"listen": "127.0.0.1:$port", "memoryCacheBytes": 0, "origin": {"allowPrivateNetworks": true},
 "limits": {"maxRenderSeconds": 300}, "diskStore": {"path": "$W/store-$side"}, "log": {"accessLog": false}}
CONF
  bench_daemon "$BIN" "$W/$side.json" $port "$W/$side.log"
  [ $side = warm ] && WARM=$BENCH_PID
done
echo "thumbd ${THUMBD_BIN:-$(git rev-parse --short HEAD) ($(git log -1 --format=%cs))}; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of $RENDERS (6× for the 4 MP JPEG, 2× for the 12 MP JPEG and WebP)"
python3 Tests/Benchmarks/floor_bench.py --port 18391 --origin-port 18390 --cold-port 18392 --daemon-pid "$WARM" \
  --inputs "$W/origin" --rounds "$ROUNDS" --renders "$RENDERS" --vips818 "$VENV/bin/python" --vips814 "$VENV/debian/bin/python"
