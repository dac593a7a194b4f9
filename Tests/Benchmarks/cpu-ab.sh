#!/usr/bin/env bash
# CPU per request of two thumbd binaries, in alternating rounds: what a refactor may not
# change, measured as CPU time (the daemon's and its worker processes', from /proc) rather
# than throughput, which a shared 2-core host's other work moves by ±40 % between rounds.
#  misses: memoryCacheBytes 0, 300 requests, each a different w of the 4 MP JPEG of
#          make-inputs.sh (X-Cache: disk after the first);
#  hits:   20 000 requests of one variant (X-Cache: memory).
# Requests come from curl --parallel (16 at a time); the client's CPU is not counted.
# Prints each round, then per case the medians and the median of B/A taken round by round.
# Usage: Tests/Benchmarks/cpu-ab.sh BIN_A BIN_B [ROUNDS]   (default 9; any directory)
# Environment: QUERY_A, QUERY_B (default empty) are added to every request of that side, so
# one binary can be paired with itself, e.g. QUERY_A='&format=webp' QUERY_B='&format=jxl';
# MODES (default "misses hits") picks the cases.
set -euo pipefail
A=$(realpath "${1:?usage: cpu-ab.sh BIN_A BIN_B [ROUNDS]}"); B=$(realpath "${2:?usage: cpu-ab.sh BIN_A BIN_B [ROUNDS]}"); ROUNDS=${3:-9}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_inputs
bench_init
mkdir "$W/origin" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18500
SRC="http%3A%2F%2F127.0.0.1%3A18500%2Fphoto.jpg"
TICK=$(getconf CLK_TCK)

# Ticks of user + system time of PID and of its live children (the worker processes).
ticks() {
  local total children
  total=$(awk '{print $14+$15+$16+$17}' "/proc/$1/stat")
  children=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
  for c in $children; do total=$((total + $(awk '{print $14+$15}' "/proc/$c/stat" 2>/dev/null || echo 0))); done
  echo "$total"
}

run() { # BIN MODE QUERY -> CPU ms per request
  local bin=$1 mode=$2 query=$3 port=18501 memory=268435456 n=20000 i
  [ "$mode" = misses ] && { memory=0; n=300; }
  cat > "$W/c.json" <<CONF
{"listen": "127.0.0.1:$port", "memoryCacheBytes": $memory, "origin": {"allowPrivateNetworks": true},
 "diskStore": {"path": "$W/store-$mode"}, "log": {"accessLog": false}}
CONF
  bench_daemon "$bin" "$W/c.json" "$port" /dev/null
  local pid=$BENCH_PID
  curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:$port/thumbnail?url=$SRC&w=256&h=256$query"
  : > "$W/urls"
  for i in $(seq "$n"); do
    if [ "$mode" = hits ]; then w=256; else w=$((101 + i)); fi
    printf 'url = "http://127.0.0.1:%s/thumbnail?url=%s&w=%s&h=256%s"\noutput = /dev/null\n' "$port" "$SRC" "$w" "$query" >> "$W/urls"
  done
  local before after
  before=$(ticks "$pid")
  curl -s -Z --parallel-max 16 -K "$W/urls" 2>/dev/null
  after=$(ticks "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$W/store-$mode"
  echo "scale=4; ($after - $before) * 1000 / $TICK / $n" | bc
}

MODES=${MODES:-misses hits}
for r in $(seq "$ROUNDS"); do
  for side in A B; do
    BIN=$A QUERY=${QUERY_A:-}; [ $side = B ] && { BIN=$B; QUERY=${QUERY_B:-}; }
    line=$side
    for mode in misses hits; do
      case " $MODES " in *" $mode "*) line="$line $(run "$BIN" $mode "$QUERY")" ;; *) line="$line 0" ;; esac
    done
    echo "$line" | tee -a "$W/results"
  done
done
python3 - "$W/results" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
a = [r for r in rows if r[0] == 'A']; b = [r for r in rows if r[0] == 'B']
for name, i in [('misses', 1), ('hits', 2)]:
    A = [float(r[i]) for r in a]; B = [float(r[i]) for r in b]
    if not any(A): continue
    ratios = [y / x for x, y in zip(A, B) if x > 0]
    print(f"{name}: CPU ms/request A {st.median(A):.4f}, B {st.median(B):.4f}; B/A by round: median {st.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
PY
