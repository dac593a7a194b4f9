#!/usr/bin/env bash
# Render-mix benchmark (issue 27 item 4), release build, everything on 127.0.0.1: misses from
# disk over the mix of sources a list page sees, each resized to about 256 px wide and written
# as JPEG q 82, thumbd against thumbor.
# The mix: one source of each kind, the requests cycling through them in order (equal counts):
#   jpeg-4mp.jpg               4 MP (2560x1600) baseline JPEG 4:2:0, cjpeg -quality 85
#   jpeg-12mp-progressive.jpg  12 MP (4224x3168) progressive JPEG 4:2:2, cjpeg -quality 85
#                              -progressive -optimize
#   png-12mp-rgb.png           the same 12 MP photo as 8-bit RGB PNG (libvips, compression 6)
#   webp-12mp.webp             cwebp -q 82 (lossy) of jpeg-12mp-baseline.jpg
#   heic-12mp.heic             heif-enc -q 80 (x265) of jpeg-12mp-baseline.jpg
#   avif-12mp.avif             avifenc -s 6 --min 20 --max 30 (aom) of jpeg-12mp-baseline.jpg
# all made by Tests/Benchmarks/make-inputs.sh --formats from the repository's fixture photos
# (its header says how: the 12 MP photo is a grained 2x2 mosaic of four fixtures, the 4 MP one
# the fox fixture alone; jpeg-12mp-baseline.jpg is the progressive JPEG re-coded by jpegtran).
#  thumbd:  memoryCacheBytes 0 (no variant is kept: every request renders), originals in its disk
#           store, warmed first (each source then answers X-Cache: disk), format=jpeg (q defaults
#           to 82), w rotating 241…270 per kind: 180 distinct variants a cycle, so no two requests
#           in flight share one and coalescing never helps;
#  thumbor: 7.8.0 (PIL engine) with pillow-heif and pillow-avif-plugin (so it reads HEIC and
#           AVIF) in .venv-bench at the repository root, 2 processes (= cores), file storage for
#           originals (warmed first), no result storage, the http loader from the same origin,
#           /unsafe/{w}x0/filters:format(jpeg)/…, QUALITY 82 — as service-bench.sh runs it
#           (lib.sh: bench_thumbor).
# Warming also checks that each server answers every source with a JPEG of the asked width.
# Load: wrk -t1 -c$MIX_CONNECTIONS -d$BENCH_SECONDS --timeout 60s, a Lua script cycling through
# the mix (at most MIX_CONNECTIONS requests in flight, so a run's count is bounded by its time).
# Runs alternate the servers (the order swapped every round), each starting once the other is
# idle. Per run: req/s, p50, p99, non-2xx and socket errors (wrk), and the server's CPU per
# request (utime + stime of all its processes from /proc, read before and right after the run,
# so the ≤ MIX_CONNECTIONS renders still in flight at the end add a little).
# Then, per round and server, CPU per render of each kind alone: MIX_CPU_RENDERS sequential
# requests on one connection (w 300…), the tree's CPU from idle to idle again over their count,
# and the median wall time of one. Prints medians over the rounds, the thumbd/thumbor ratios
# (target: req/s >= 1.5) and the peak RSS of each server's processes.
# Usage: Tests/Benchmarks/mix-bench.sh [ROUNDS]        (default 3; any directory)
# Environment: BENCH_SECONDS (default 10), THUMBD_BIN (lib.sh); MIX_CONNECTIONS (default 4),
# MIX_CPU_RENDERS (default 4; 0 leaves the per-kind pass out).
# From a fresh clone (Debian, Swift 6; installs wrk, the make-inputs.sh tools, and thumbor into
# .venv-bench with pip):  git clone URL thumbd && cd thumbd && Tests/Benchmarks/mix-bench.sh
# A quick trial run: BENCH_SECONDS=2 MIX_CPU_RENDERS=1 Tests/Benchmarks/mix-bench.sh 1
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
ROUNDS=${1:-3}
CONNS=${MIX_CONNECTIONS:-4}; CPU_N=${MIX_CPU_RENDERS:-4}
bash .ci/deps.sh wrk

# thumbor and the plugins, pinned, in a venv of their own (made once and kept).
VENV=$PWD/.venv-bench
if ! "$VENV/bin/python" -c 'from thumbor.engines import pil; assert pil.HAVE_HEIF and pil.HAVE_AVIF' 2>/dev/null; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 makes venvs only with python3-venv (ensurepip).
    rm -rf "$VENV"; bash .ci/deps.sh python3-venv; python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check thumbor==7.8.0 pillow-heif==1.8.1 pillow-avif-plugin==1.6.0
fi
bench_inputs --formats
BIN=$(bench_release_bin)
bench_init
PY=(python3 Tests/Benchmarks/mix_bench.py)

KINDS=(jpeg-4mp jpeg-12mp-progressive png-12mp webp-12mp heic-12mp avif-12mp)
FILES=(jpeg-4mp.jpg jpeg-12mp-progressive.jpg png-12mp-rgb.png webp-12mp.webp heic-12mp.heic avif-12mp.avif)
mkdir "$W/origin"
for f in "${FILES[@]}"; do ln -s "$INPUTS/$f" "$W/origin/$f"; done
bench_origin "$W/origin" 18460
D_PATHS=(); T_PATHS=()
for f in "${FILES[@]}"; do
  D_PATHS+=("/thumbnail?url=http%3A%2F%2F127.0.0.1%3A18460%2F$f&w={W}&format=jpeg")
  T_PATHS+=("/unsafe/{W}x0/filters:format(jpeg)/127.0.0.1:18460/$f")
done

cat > "$W/thumbd.json" <<CONF
{"listen": "127.0.0.1:18461", "memoryCacheBytes": 0, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
bench_daemon "$BIN" "$W/thumbd.json" 18461 "$W/thumbd.log"
THUMBD=$BENCH_PID
BENCH_LOG="$W/thumbor.log" bench_thumbor "$VENV/bin/thumbor" 18462
THUMBOR=$BENCH_THUMBOR

# Originals onto each server's disk: the first request of each source fetches it, the second
# must come from thumbd's disk store; thumbor's file storage must then hold all six.
"${PY[@]}" warm thumbd 18461 - "${D_PATHS[@]}"
"${PY[@]}" warm thumbd 18461 disk "${D_PATHS[@]}"
"${PY[@]}" warm thumbor 18462 - "${T_PATHS[@]}"
for _ in $(seq 50); do   # up to 5 s, in case thumbor writes its storage after answering
  stored=$(find "$W/thumbor-storage" -type f ! -name '*.txt' 2>/dev/null | wc -l)
  [ "$stored" -ge ${#FILES[@]} ] && break; sleep 0.1
done
[ "$stored" -ge ${#FILES[@]} ] || { echo "thumbor's file storage holds $stored originals, not ${#FILES[@]}" >&2; exit 1; }

cat > "$W/mix.lua" <<'LUA'
-- MIX_PATHS: the request paths, one per source kind, separated by spaces, each holding "{W}".
-- Request k goes to kind k mod #paths with w = 241 + (floor(k / #paths) mod 30); only
-- concatenation, since the paths are percent-encoded text.
local paths = {}
for p in string.gmatch(os.getenv("MIX_PATHS"), "%S+") do
  local at = string.find(p, "{W}", 1, true)
  paths[#paths + 1] = {string.sub(p, 1, at - 1), string.sub(p, at + 3)}
end
local counter = 0
request = function()
  local p = paths[counter % #paths + 1]
  local w = 241 + (math.floor(counter / #paths) % 30)
  counter = counter + 1
  return wrk.format("GET", p[1] .. tostring(w) .. p[2])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("MIX %.2f %.1f %.1f %d %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status,
    e.connect + e.read + e.write + e.timeout, summary.requests))
end
LUA

run_mix() { # NAME PORT ROOT_PID PATHS...: appends "mix-NAME req/s p50 p99 non2xx socketerrors cpu_ms/request"
  local name=$1 port=$2 root=$3; shift 3
  "${PY[@]}" idle "$root"
  local before; before=$("${PY[@]}" ticks "$root")
  local out
  out=$(MIX_PATHS="$*" wrk -t1 -c"$CONNS" -d"${BENCH_SECONDS:-10}s" --timeout 60s -s "$W/mix.lua" "http://127.0.0.1:$port/" | grep '^MIX ')
  local after; after=$("${PY[@]}" ticks "$root")
  echo "$out" | awk -v n="mix-$name" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    '{printf "%s %s %s %s %s %s %.1f\n", n, $2, $3, $4, $5, $6, ($7 > 0 ? t * 1000 / hz / $7 : 0)}' >> "$W/results"
  tail -1 "$W/results" >&2
}
kind_args() { # PATHS...: "KIND=PATH" for each kind
  local i=0
  for p in "$@"; do echo "${KINDS[$i]}=$p"; i=$((i + 1)); done
}
mapfile -t D_KINDS < <(kind_args "${D_PATHS[@]}")
mapfile -t T_KINDS < <(kind_args "${T_PATHS[@]}")
for i in $(seq "$ROUNDS"); do
  order=(thumbd thumbor); [ $((i % 2)) = 0 ] && order=(thumbor thumbd)
  for s in "${order[@]}"; do
    if [ "$s" = thumbd ]; then run_mix thumbd 18461 "$THUMBD" "${D_PATHS[@]}"
    else run_mix thumbor 18462 "$THUMBOR" "${T_PATHS[@]}"; fi
  done
  if [ "$CPU_N" -gt 0 ]; then
    for s in "${order[@]}"; do
      if [ "$s" = thumbd ]; then "${PY[@]}" cpu thumbd "$THUMBD" 18461 "$CPU_N" 300 "${D_KINDS[@]}" >> "$W/results"
      else "${PY[@]}" cpu thumbor "$THUMBOR" 18462 "$CPU_N" 300 "${T_KINDS[@]}" >> "$W/results"; fi
    done
  fi
done
echo "rss-thumbd $("${PY[@]}" rss "$THUMBD")" >> "$W/results"
echo "rss-thumbor $("${PY[@]}" rss "$THUMBOR")" >> "$W/results"
"${PY[@]}" report "$W/results"
