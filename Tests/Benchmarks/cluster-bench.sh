#!/usr/bin/env bash
# Cluster benchmark (issue 12): aggregate throughput through nginx (the shipped
# Config/nginx-thumbd.conf, worker_processes 1) in front of 1 and of 3 thumbd
# instances (release build), everything on 127.0.0.1. 120 distinct sources
# (jpeg-4mp.jpg of make-inputs.sh under 120 names, each with its own COM segment)
# rotate per request, so the hash spreads them over the instances:
#  hits:   w=256&h=256, every variant rendered once beforehand (X-Cache: memory);
#  misses: memoryCacheBytes 0, originals on disk, w rotating (X-Cache: disk: a
#          4 MP decode + scale + encode per request).
# wrk -t1 -d10s --timeout 10s per cell (hits -c64; misses -c8, so a request's wait in
# the render queue stays far below the timeout and no abandoned render is counted),
# setups alternating for ROUNDS rounds; medians, and every error wrk saw.
# On a 2-core machine nginx, wrk and every thumbd share the same two CPUs, so
# 3 instances cannot add CPU: expect the hash to spread load, not to multiply it.
# Usage: Tests/Benchmarks/cluster-bench.sh [ROUNDS]        (default 1; any directory)
# From a fresh clone (Debian, Swift 6; installs wrk, nginx, libvips-tools, libjpeg-turbo-progs):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/cluster-bench.sh
# A quick trial run: BENCH_SECONDS=2 Tests/Benchmarks/cluster-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
ROUNDS=${1:-1}
SOURCES=120
bash .ci/deps.sh wrk nginx
bench_inputs
BIN=$(bench_release_bin)
bench_init
chmod 755 "$W"; mkdir "$W/origin" "$W/tmp"   # nginx's workers (user nobody) write their temp files here
python3 - "$INPUTS/jpeg-4mp.jpg" "$W/origin" "$SOURCES" <<'PY'
import struct, sys
base = open(sys.argv[1], "rb").read()
for i in range(int(sys.argv[3])):
    text = f"bench source {i}".encode()
    open(f"{sys.argv[2]}/src-{i:03d}.jpg", "wb").write(base[:2] + b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text + base[2:])
PY
ORIGIN=18400
bench_origin "$W/origin" $ORIGIN
PREFIX="http%3A%2F%2F127.0.0.1%3A$ORIGIN%2Fsrc-"

cat > "$W/rotate.lua" <<'LUA'
-- Source index and width rotate independently; PREFIX is percent-encoded
-- text and VARIANT either a fixed query tail or "" for a rotating w.
counter = 0
local prefix, variant, sources = os.getenv("PREFIX"), os.getenv("VARIANT"), tonumber(os.getenv("SOURCES"))
request = function()
  counter = counter + 1
  local tail = variant
  if tail == "" then tail = "&w=" .. tostring(100 + (counter * 7) % 300) end
  return wrk.format("GET", "/thumbnail?url=" .. prefix .. string.format("%03d", counter % sources) .. ".jpg" .. tail)
end
LUA

# start_setup NAME N MEMORY NGINX_PORT FIRST_PORT: N instances and an nginx in front.
start_setup() {
  local name=$1 n=$2 mem=$3 port=$4 first=$5 servers="" k
  for k in $(seq 0 $((n - 1))); do
    cat > "$W/$name-$k.json" <<CONF
{"listen": "127.0.0.1:$((first + k))", "memoryCacheBytes": $mem, "origin": {"allowPrivateNetworks": true},
 "diskStore": {"path": "$W/store-$name-$k"}, "log": {"accessLog": false}}
CONF
    BENCH_LOG="$W/$name-$k.err" bench_bg "$BIN" --config "$W/$name-$k.json"
    servers+="    server 127.0.0.1:$((first + k)) max_fails=1 fail_timeout=10s;\n"
  done
  # The shipped file with its three server lines replaced by this setup's.
  awk -v servers="$servers" '
    /^    server 127\.0\.0\.1:808[0-9]/ { if (!done) { printf "%s", servers; done = 1 }; next }
    { sub(/listen 80;/, "listen 127.0.0.1:'"$port"';"); print }' Config/nginx-thumbd.conf > "$W/$name-thumbd.conf"
  cat > "$W/$name-nginx.conf" <<CONF
worker_processes 1; daemon off; pid $W/$name-nginx.pid; error_log $W/$name-nginx.err;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $W/tmp; proxy_temp_path $W/tmp; fastcgi_temp_path $W/tmp;
  uwsgi_temp_path $W/tmp; scgi_temp_path $W/tmp; include $W/$name-thumbd.conf; }
CONF
  bench_bg nginx -c "$W/$name-nginx.conf"
}
start_setup hits1 1 268435456 18410 18411
start_setup hits3 3 268435456 18420 18421
start_setup miss1 1 0 18430 18431
start_setup miss3 3 0 18440 18441
for port in 18410 18411 18420 18421 18422 18423 18430 18431 18440 18441 18442 18443; do bench_wait_port $port; done
# Warm: every hits variant rendered once, every original on the misses' disks.
for port in 18410 18420 18430 18440; do
  for i in $(seq 0 $((SOURCES - 1))); do printf '%03d\n' "$i"; done |
    xargs -P 4 -I{} curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:$port/thumbnail?url=${PREFIX}{}.jpg&w=256&h=256"
done

run() { # PORT VARIANT CONNECTIONS -> "req/s p99ms errors" (errors: non-2xx + socket errors, timeouts included)
  PREFIX=$PREFIX VARIANT=$2 SOURCES=$SOURCES wrk -t1 -c"$3" -d"${BENCH_SECONDS:-10}s" --timeout 10s --latency -s "$W/rotate.lua" "http://127.0.0.1:$1" | awk '
    /Requests\/sec/ {rps=$2}
    /Non-2xx/ {bad+=$NF}
    /Socket errors/ {gsub(/,/, ""); bad+=$4+$6+$8+$10}
    /^ +99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; p99=v}
    END {print rps, p99, bad+0}'
}
LOAD_BEFORE=$(cut -d" " -f1-3 /proc/loadavg)
for i in $(seq "$ROUNDS"); do
  echo "hits 1 $(run 18410 '&w=256&h=256' 64)" >> "$W/results"
  echo "hits 3 $(run 18420 '&w=256&h=256' 64)" >> "$W/results"
  echo "hits direct $(run 18411 '&w=256&h=256' 64)" >> "$W/results"
  echo "misses 1 $(run 18430 '' 8)" >> "$W/results"
  echo "misses 3 $(run 18440 '' 8)" >> "$W/results"
  echo "misses direct $(run 18431 '' 8)" >> "$W/results"
done
for port in 18421 18422 18423 18441 18442 18443; do
  echo "$port $(curl -s --max-time 10 "http://127.0.0.1:$port/stats")" >> "$W/stats"
done
echo "load average (1/5/15 min) before: $LOAD_BEFORE, after: $(cut -d" " -f1-3 /proc/loadavg), CPUs: $(nproc)"
python3 - "$W/results" "$W/stats" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(case, setup, i): return statistics.median(float(r[i]) for r in rows if r[0] == case and r[1] == setup)
def bad(case, setup): return sum(int(r[4]) for r in rows if r[0] == case and r[1] == setup)
label = {"direct": "1 instance, no nginx", "1": "nginx + 1 instance", "3": "nginx + 3 instances"}
print("| case | setup | req/s (median) | p99 ms (median) | errors, all rounds |\n|---|---|---|---|---|")
for case in ("hits", "misses"):
    for setup in ("direct", "1", "3"):
        print(f"| {case} | {label[setup]} | {med(case, setup, 2):.0f} | {med(case, setup, 3):.1f} | {bad(case, setup)} |")
for case in ("hits", "misses"):
    print(f"{case}: 3 instances / 1 instance through nginx = {med(case, '3', 2) / med(case, '1', 2):.2f}")
for line in open(sys.argv[2]):
    port, stats = line.split(" ", 1)
    s = json.loads(stats)
    print(f"instance :{port}: /thumbnail requests {s['memoryCache']['hits'] + s['memoryCache']['misses']}, "
          f"originals {s['diskStore']['entries']}, origin fetches {s['origin']['fetches']}")
print("raw:", rows)
PY
