#!/usr/bin/env bash
# The first screen of a list on a cold daemon (issue 38; Results.md § The first screen), as an
# app sees it: Sources/FirstScreenBench uses ThumbClient as a list does — a 3-column grid of
# 130-pt cells at scale 3 (390 px thumbnails, fit=cover), the PrefetchPlanner told of two
# screens of rows (`rowsWillAppear`, 36 rows: 18 visible, 18 ahead), then each of the first
# screen's 18 cells asking for its row's facts and `thumbnail(for:)` at once.
#  Sources: a loopback origin (python3 http.server) serving the 12 MP photo of make-inputs.sh
#  --formats in six kinds — 4 MP JPEG (baseline), 12 MP progressive JPEG, 12 MP RGB PNG,
#  HEIC (heif-enc: no thumbnail item), AVIF, WebP — each under 6 names: 36 distinct URLs.
#  Row order, fixed: the six kinds in that order, six times over (every screen holds 3 of each).
#  Cold: a fresh daemon and disk store each run (the release build); the program prints the
#  time of the first row's facts (the stream's first line), of every visible row's facts and
#  thumbnail, the median over visible rows of facts ÷ thumbnail, and how many visible rows had
#  their facts before their own thumbnail. Warm: the same program again, a new process, against
#  the same daemon (its memory cache holds every visible thumbnail).
# With OLD_BIN (a thumbd built the same way from another commit, e.g. 8bda783, before the
# streamed /info), the runs alternate between the two daemons, the same client program against
# both (an older daemon answers the batch JSON whole; the client reads that instead).
# Prints every run, then a table of medians.
# Usage: Tests/Benchmarks/first-screen.sh [RUNS]   (default 5; from any directory)
# Environment: OLD_BIN as above; THUMBD_BIN, BENCH_INPUTS as in lib.sh.
# From a fresh clone (Debian, Swift 6; installs what make-inputs.sh --formats needs):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/first-screen.sh
set -euo pipefail
RUNS=${1:-5}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_inputs --formats
BIN=$(bench_release_bin)
swift build -c release --product FirstScreenBench >/dev/null
CLIENT="$(swift build -c release --show-bin-path)/FirstScreenBench"
bench_init

mkdir "$W/origin"
kinds=(jpeg-4mp.jpg jpeg-12mp-progressive.jpg png-12mp-rgb.png heic-12mp.heic avif-12mp.avif webp-12mp.webp)
for n in 1 2 3 4 5 6; do
  for kind in "${kinds[@]}"; do
    cp "$INPUTS/$kind" "$W/origin/$n-$kind"
    echo "http://127.0.0.1:18360/$n-$kind" >> "$W/sources"
  done
done
bench_origin "$W/origin" 18360

# One cold run and one warm run of daemon BIN (label LABEL) on a fresh store; appends to $W/results.
run() { # LABEL BIN N
  rm -rf "$W/store"
  cat > "$W/daemon.json" <<CONF
{"listen": "127.0.0.1:18361", "memoryCacheBytes": 268435456, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
  bench_daemon "$2" "$W/daemon.json" 18361 "$W/daemon-$1-$3.log"
  local pid=$BENCH_PID
  echo "$1 cold $("$CLIENT" http://127.0.0.1:18361 "$W/sources")" | tee -a "$W/results"
  echo "$1 warm $("$CLIENT" http://127.0.0.1:18361 "$W/sources")" | tee -a "$W/results"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for i in $(seq "$RUNS"); do
  run streamed "$BIN" "$i"
  [ -n "${OLD_BIN:-}" ] && run before "$(realpath "$OLD_BIN")" "$i"
done

python3 - "$W/results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, kind, *fields = line.split()
    runs.setdefault((label, kind), []).append(dict(f.split("=") for f in fields))
def med(rows, key): return statistics.median(float(r[key]) for r in rows)
print(f"\nmedians of {max(len(v) for v in runs.values())} runs")
print(f"{'daemon':10} {'cache':5} {'first line ms':>13} {'facts ms':>9} {'thumbs ms':>10} {'facts/thumb':>11} {'facts first':>11} {'errors':>6}")
for (label, kind), rows in sorted(runs.items(), key=lambda kv: (kv[0][0] != "streamed", kv[0][1])):
    first = f"{med(rows, 'facts_first'):g} ({min(int(r['facts_first']) for r in rows)})"
    print(f"{label:10} {kind:5} {med(rows, 'first_ms'):13.1f} {med(rows, 'facts_ms'):9.1f} {med(rows, 'thumbs_ms'):10.1f} "
          f"{med(rows, 'ratio'):11.3f} {first:>11} {sum(int(r['errors']) for r in rows):6}")
print("facts first: visible rows (of 18) whose facts came before their thumbnail, median (fewest)")
PY
