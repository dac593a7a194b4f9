#!/usr/bin/env bash
# Service benchmark, release build, everything on 127.0.0.1 (Testing.md § Benchmarks):
#  hits:   wrk -t1 -d10s at -c64 and -c512 on one /thumbnail variant (X-Cache: memory),
#          beside nginx serving the same thumbnail bytes as a static file as its
#          operators run it (sendfile, tcp_nopush, open_file_cache), once with
#          worker_processes 1 (wrk takes the other core) and once with auto;
#  misses: memoryCacheBytes 0 and a different w per request (wrk Lua), originals on disk
#          (X-Cache: disk), beside thumbor (2 processes = cores, file storage for
#          originals, no result storage) doing the same resize of the same 4 MP photo
#          (jpeg-4mp.jpg of make-inputs.sh).
# Rounds alternate the servers; prints medians of req/s and p99, the ratios, and peak RSS.
# The storm (memory under distinct 12 MP decodes) is Tests/Benchmarks/storm.sh.
# Usage: Tests/Benchmarks/service-bench.sh [ROUNDS]        (default 3; any directory)
# From a fresh clone (Debian, Swift 6; installs wrk, nginx, libvips-tools, libjpeg-turbo-progs,
# and thumbor with pip when python3 cannot import it):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/service-bench.sh
# A quick trial run: BENCH_SECONDS=2 Tests/Benchmarks/service-bench.sh 1
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
ROUNDS=${1:-3}
bash .ci/deps.sh wrk nginx
python3 -c 'import thumbor' 2>/dev/null || python3 -m pip install -q thumbor
bench_inputs
BIN=$(bench_release_bin)
bench_init
mkdir "$W/origin" "$W/static" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18200
SRC="http%3A%2F%2F127.0.0.1%3A18200%2Fphoto.jpg"
for side in hits misses; do
  memory=268435456; port=18201; [ $side = misses ] && memory=0 && port=18202
  cat > "$W/$side.json" <<CONF
{"listen": "127.0.0.1:$port", "memoryCacheBytes": $memory, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store-$side"}, "log": {"accessLog": false}}
CONF
  bench_daemon "$BIN" "$W/$side.json" $port /dev/null
  [ $side = hits ] && HITS=$BENCH_PID || MISSES=$BENCH_PID
done
bench_thumbor thumbor 18203
curl -sf --max-time 60 -o "$W/static/thumb.jpg" "http://127.0.0.1:18201/thumbnail?url=$SRC&w=256&h=256"
curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:18202/thumbnail?url=$SRC&w=100"          # original onto disk
curl -sf --max-time 60 -o /dev/null "http://127.0.0.1:18203/unsafe/100x0/127.0.0.1:18200/photo.jpg"  # thumbor's storage too
for workers in 1 auto; do
  port=18204; [ $workers = auto ] && port=18205
  cat > "$W/nginx-$workers.conf" <<CONF
worker_processes $workers; daemon off; pid $W/nginx-$workers.pid; error_log $W/nginx-$workers.err;
events { worker_connections 2048; }
http { access_log off; client_body_temp_path $W; proxy_temp_path $W; fastcgi_temp_path $W; uwsgi_temp_path $W; scgi_temp_path $W;
  # As its operators run it for static files.
  sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 100000; open_file_cache max=100 inactive=60s;
  server { listen 127.0.0.1:$port; location / { root $W/static; try_files /thumb.jpg =404; } } }
CONF
  bench_bg nginx -c "$W/nginx-$workers.conf"
  bench_wait_port $port
done
bench_vary_lua "$W/vary.lua"
HIT="http://127.0.0.1:18201/thumbnail?url=$SRC&w=256&h=256"
for i in $(seq "$ROUNDS"); do
  for c in 64 512; do
    echo "hits$c-thumbd $(bench_wrk "$HIT" $c)" >> "$W/results"
    echo "hits$c-nginx1 $(bench_wrk http://127.0.0.1:18204/thumb.jpg $c)" >> "$W/results"
    echo "hits$c-nginxauto $(bench_wrk http://127.0.0.1:18205/thumb.jpg $c)" >> "$W/results"
  done
  echo "misses-thumbd $(PATH_FMT="/thumbnail?url=$SRC&w={N}" bench_wrk "http://127.0.0.1:18202/" 64 "$W/vary.lua")" >> "$W/results"
  echo "misses-thumbor $(PATH_FMT="/unsafe/{N}x0/127.0.0.1:18200/photo.jpg" bench_wrk "http://127.0.0.1:18203/" 64 "$W/vary.lua")" >> "$W/results"
done
hwm() { awk '/VmHWM/ {s+=$2} END {printf "%.0f", s/1024}' "$@" 2>/dev/null; }
echo "rss-thumbd-hits $(hwm /proc/$HITS/status) 0 0" >> "$W/results"
echo "rss-thumbd-misses $(hwm /proc/$MISSES/status) 0 0" >> "$W/results"
echo "rss-thumbor $(hwm $(pgrep -f "thumbor -p 18203" | sed 's|.*|/proc/&/status|')) 0 0" >> "$W/results"
python3 - "$W/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, i): return statistics.median(float(r[i]) for r in rows if r[0] == name)
print("| case | server | req/s | p99 ms | non-2xx (all rounds) |\n|---|---|---|---|---|")
cases = [("hits64", ["thumbd", "nginx1", "nginxauto"]), ("hits512", ["thumbd", "nginx1", "nginxauto"]),
         ("misses", ["thumbd", "thumbor"])]
for case, servers in cases:
    for s in servers:
        bad = sum(int(r[3]) for r in rows if r[0] == f"{case}-{s}")
        print(f"| {case} | {s} | {med(f'{case}-{s}', 1):.0f} | {med(f'{case}-{s}', 2):.1f} | {bad} |")
print()
for c, target in (("64", 0.9), ("512", 0.8)):
    for peer in ("nginx1", "nginxauto"):
        r = med(f"hits{c}-thumbd", 1) / med(f"hits{c}-{peer}", 1)
        p = med(f"hits{c}-thumbd", 2) / med(f"hits{c}-{peer}", 2)
        print(f"hits -c{c}: thumbd/{peer} req/s {r:.2f} (target >= {target}), p99 {p:.2f} (target <= 1.5)")
print(f"misses: thumbd/thumbor req/s {med('misses-thumbd',1)/med('misses-thumbor',1):.2f}, "
      f"p99 {med('misses-thumbd',2)/med('misses-thumbor',2):.2f}")
print(f"peak RSS MB: thumbd hits {med('rss-thumbd-hits',1):.0f}, thumbd misses {med('rss-thumbd-misses',1):.0f}, "
      f"thumbor (all processes) {med('rss-thumbor',1):.0f}")
print("raw:", rows)
PY
