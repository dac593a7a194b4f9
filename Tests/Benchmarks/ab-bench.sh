#!/usr/bin/env bash
# A/B benchmark of two thumbd binaries (e.g. before and after a refactor), in one run,
# rounds alternating so machine noise hits both alike. Everything on 127.0.0.1.
#  hits:   wrk -t1 -c64 -d10s on one /thumbnail variant (X-Cache: memory);
#  misses: memoryCacheBytes 0, a different w per request (X-Cache: disk, the 4 MP JPEG
#          original of make-inputs.sh).
# Prints a table of medians (req/s, p99, non-2xx) per case and build, and B/A of req/s.
# Usage: Tests/Benchmarks/ab-bench.sh BIN_A BIN_B [ROUNDS]   (default 3 rounds; any directory)
# From a fresh clone (Debian, Swift 6; installs wrk, libvips-tools, libjpeg-turbo-progs):
#   git clone URL thumbd && cd thumbd
#   git checkout BEFORE && swift build -c release && cp .build/release/thumbd /tmp/thumbd-a
#   git checkout AFTER && swift build -c release && cp .build/release/thumbd /tmp/thumbd-b
#   Tests/Benchmarks/ab-bench.sh /tmp/thumbd-a /tmp/thumbd-b
# A quick trial run: BENCH_SECONDS=2 Tests/Benchmarks/ab-bench.sh /tmp/thumbd-a /tmp/thumbd-b 1
set -euo pipefail
A=$(realpath "${1:?usage: ab-bench.sh BIN_A BIN_B [ROUNDS]}"); B=$(realpath "${2:?usage: ab-bench.sh BIN_A BIN_B [ROUNDS]}"); ROUNDS=${3:-3}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh wrk
bench_inputs
bench_init
mkdir "$W/origin" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18300
SRC="http%3A%2F%2F127.0.0.1%3A18300%2Fphoto.jpg"
bench_vary_lua "$W/vary.lua"
start() { # NAME BIN PORT MEMORY -> pid in BENCH_PID
  cat > "$W/$1.json" <<CONF
{"listen": "127.0.0.1:$3", "memoryCacheBytes": $4, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store-$1"}, "log": {"accessLog": false}}
CONF
  bench_daemon "$2" "$W/$1.json" "$3" /dev/null
}
for i in $(seq "$ROUNDS"); do
  for side in A B; do
    BIN=$A; [ $side = B ] && BIN=$B
    start "hits$side$i" "$BIN" 18301 268435456; H=$BENCH_PID
    start "misses$side$i" "$BIN" 18302 0; M=$BENCH_PID
    curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:18301/thumbnail?url=$SRC&w=256&h=256"
    curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:18302/thumbnail?url=$SRC&w=100"
    echo "hits-$side $(bench_wrk "http://127.0.0.1:18301/thumbnail?url=$SRC&w=256&h=256" 64)" >> "$W/results"
    echo "misses-$side $(PATH_FMT="/thumbnail?url=$SRC&w={N}" bench_wrk "http://127.0.0.1:18302/" 64 "$W/vary.lua")" >> "$W/results"
    kill $H $M; wait $H $M 2>/dev/null || true
  done
done
python3 - "$W/results" "$A" "$B" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, i): return statistics.median(float(r[i]) for r in rows if r[0] == name)
print(f"A = {sys.argv[2]}\nB = {sys.argv[3]}\n")
print("| case | build | req/s (median) | p99 ms | non-2xx |\n|---|---|---|---|---|")
for case in ("hits", "misses"):
    for s in "AB":
        bad = sum(int(r[3]) for r in rows if r[0] == f"{case}-{s}")
        print(f"| {case} | {s} | {med(f'{case}-{s}', 1):.0f} | {med(f'{case}-{s}', 2):.1f} | {bad} |")
    print(f"\n{case}: B/A req/s {med(f'{case}-B',1)/med(f'{case}-A',1):.3f}")
print("raw:", rows)
PY
