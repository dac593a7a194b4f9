#!/usr/bin/env bash
# A/B benchmark of two thumbd binaries (e.g. before and after a refactor), in one run,
# rounds alternating so machine noise hits both alike. Everything on 127.0.0.1.
#  hits:   wrk -t1 -c64 -d10s on one /thumbnail variant (X-Cache: memory);
#  misses: memoryCacheBytes 0, a different w per request (X-Cache: disk, 4 MP JPEG original).
# Usage: Tests/Benchmarks/ab-bench.sh BIN_A BIN_B [ROUNDS]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
A=$1; B=$2; ROUNDS=${3:-3}
bash .ci/deps.sh wrk libvips-tools libjpeg-turbo-progs
INPUTS="$PWD/.build-bench-inputs"
bash ../shared/bench/make-inputs.sh "$INPUTS" >/dev/null
W=$(mktemp -d)
cp "$INPUTS/jpeg-4mp.jpg" "$W/photo.jpg"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
(cd "$W" && exec python3 -m http.server 18300 --bind 127.0.0.1 >/dev/null 2>&1) & PIDS+=($!)
SRC="http%3A%2F%2F127.0.0.1%3A18300%2Fphoto.jpg"
cat > "$W/vary.lua" <<'LUA'
counter = 0
local fmt = os.getenv("PATH_FMT")
local at = string.find(fmt, "{N}", 1, true)
local before, after = string.sub(fmt, 1, at - 1), string.sub(fmt, at + 3)
request = function()
  counter = counter + 1
  return wrk.format("GET", before .. tostring(100 + (counter % 300)) .. after)
end
LUA
run() { # URL [lua] -> "req/s p99ms non-2xx"
  local extra=(); [ -n "${2:-}" ] && extra=(-s "$W/vary.lua")
  wrk -t1 -c64 -d10s --latency "${extra[@]}" "$1" | awk '
    /Requests\/sec/ {rps=$2}
    /Non-2xx/ {bad=$NF}
    /^ +99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; p99=v}
    END {print rps, p99, bad+0}'
}
start() { # NAME BIN PORT MEMORY -> pid
  cat > "$W/$1.json" <<CONF
{"listen": "127.0.0.1:$3", "memoryCacheBytes": $4, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store-$1"}, "log": {"accessLog": false}}
CONF
  # Its output must not hold the $(...) pipe open, or the caller waits forever.
  "$2" --config "$W/$1.json" >/dev/null 2>&1 & echo $!
}
for i in $(seq "$ROUNDS"); do
  for side in A B; do
    BIN=$A; [ $side = B ] && BIN=$B
    H=$(start "hits$side$i" "$BIN" 18301 268435456); M=$(start "misses$side$i" "$BIN" 18302 0); PIDS+=($H $M)
    sleep 1
    curl -sf -o /dev/null "http://127.0.0.1:18301/thumbnail?url=$SRC&w=256&h=256"
    curl -sf -o /dev/null "http://127.0.0.1:18302/thumbnail?url=$SRC&w=100"
    echo "hits-$side $(run "http://127.0.0.1:18301/thumbnail?url=$SRC&w=256&h=256")" >> "$W/results"
    echo "misses-$side $(PATH_FMT="/thumbnail?url=$SRC&w={N}" run "http://127.0.0.1:18302/" lua)" >> "$W/results"
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
