#!/usr/bin/env bash
# What the render workers (Isolation.md) cost, against a build without them, on 127.0.0.1:
#  cpu:    CPU seconds (user + system, thumbd and every worker: /usr/bin/time of a run that
#          starts thumbd, asks N misses from disk and stops it) per render, rounds
#          alternating A, B, A, B…; the 4 MP JPEG of make-inputs.sh, memoryCacheBytes 0, a
#          different w (100…) per request, the original already in the run's disk store.
#  spawn:  milliseconds from posix_spawn of `thumbd __worker` to its `ready` frame (libraries
#          loaded, sandbox entered), 20 spawns, by Tests/Benchmarks/worker_spawn.py (B only).
# req/s of misses and hits: Tests/Benchmarks/ab-bench.sh A B.
# Usage: Tests/Benchmarks/sandbox-bench.sh BIN_A BIN_B [ROUNDS] [N]   (default 5 rounds, 100 renders)
set -euo pipefail
A=$(realpath "${1:?usage: sandbox-bench.sh BIN_A BIN_B [ROUNDS] [N]}")
B=$(realpath "${2:?usage: sandbox-bench.sh BIN_A BIN_B [ROUNDS] [N]}")
ROUNDS=${3:-5} N=${4:-100}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_inputs
bench_init
mkdir "$W/origin" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18310
SRC="http%3A%2F%2F127.0.0.1%3A18310%2Fphoto.jpg"
URLS=()
for i in $(seq "$N"); do URLS+=("http://127.0.0.1:18311/thumbnail?url=$SRC&w=$((99 + i))" -o /dev/null); done

run() { # SIDE BIN: one timed run; prints "user system"
  cat > "$W/$1.json" <<CONF
{"listen": "127.0.0.1:18311", "memoryCacheBytes": 0, "workers": 2, "origin": {"allowPrivateNetworks": true},
 "diskStore": {"path": "$W/store-$1"}, "log": {"accessLog": false}}
CONF
  /usr/bin/time -f "%U %S" -o "$W/time" bash -c '
    "$1" --config "$2" >/dev/null 2>&1 & pid=$!
    for _ in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/18311) 2>/dev/null && break; sleep 0.1; done
    shift 2
    curl -sf --max-time 120 "$@" || echo "a request failed" >&2
    kill -TERM $pid; wait $pid' _ "$2" "$W/$1.json" "${URLS[@]}"
  cat "$W/time"
}
# The original into each store first (a miss from the origin is not what this measures).
for side in A B; do
  BIN=$A; [ $side = B ] && BIN=$B
  run "$side" "$BIN" >/dev/null
done
for r in $(seq "$ROUNDS"); do
  echo "A $(run A "$A")" >> "$W/results"
  echo "B $(run B "$B")" >> "$W/results"
done
python3 - "$W/results" "$N" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
cpu = {s: [float(u) + float(k) for side, u, k in rows if side == s] for s in "AB"}
ratios = [b / a for a, b in zip(cpu["A"], cpu["B"])]
print("| build | CPU s per run (median of %d) | ms CPU per render |" % len(cpu["A"]))
print("|---|---|---|")
for s in "AB":
    m = statistics.median(cpu[s])
    print(f"| {s} | {m:.2f} | {1000 * m / n:.1f} |")
print(f"B/A CPU, pair by pair: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
python3 Tests/Benchmarks/worker_spawn.py "$B" 20
