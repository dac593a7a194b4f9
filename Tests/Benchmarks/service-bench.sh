#!/usr/bin/env bash
# Service benchmark (issue 4), release build, everything on 127.0.0.1:
#  hits:   wrk -t1 -c64 -d10s on one /thumbnail variant (X-Cache: memory) beside nginx
#          (worker_processes 1, sendfile, tcp_nopush, open_file_cache) serving the same
#          thumbnail bytes as a static file;
#  misses: memoryCacheBytes 0 and a different w per request (wrk Lua), originals on disk
#          (X-Cache: disk), beside thumbor (2 processes, file storage for originals, no
#          result storage) doing the same resize of the same ~4 MP photo.
# Prints req/s, p99 and ratios, plus the servers' peak RSS (VmHWM) under load.
# Usage: Tests/Benchmarks/service-bench.sh [ROUNDS]        (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-2}
bash .ci/deps.sh wrk nginx-light libvips-tools libjpeg-turbo-progs
python3 -c 'import thumbor' 2>/dev/null || pip install -q thumbor
INPUTS="$PWD/.build-bench-inputs"
bash ../shared/bench/make-inputs.sh "$INPUTS" >/dev/null
swift build -c release --product thumbd >/dev/null
BIN=$(swift build -c release --show-bin-path)/thumbd
W=$(mktemp -d)
cp "$INPUTS/jpeg-4mp.jpg" "$W/photo.jpg"
PIDS=()
cleanup() {
  [ -n "${THUMBOR:-}" ] && kill -- -"$THUMBOR" 2>/dev/null || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$W"
}
trap cleanup EXIT
(cd "$W" && exec python3 -m http.server 18200 --bind 127.0.0.1 >/dev/null 2>&1) & PIDS+=($!)
SRC="http%3A%2F%2F127.0.0.1%3A18200%2Fphoto.jpg"
cat > "$W/hits.json" <<CONF
{"listen": "127.0.0.1:18201", "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store-hits"}, "log": {"accessLog": false}}
CONF
cat > "$W/misses.json" <<CONF
{"listen": "127.0.0.1:18202", "memoryCacheBytes": 0, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store-misses"}, "log": {"accessLog": false}}
CONF
"$BIN" --config "$W/hits.json" 2>/dev/null & HITS=$!; PIDS+=($HITS)
"$BIN" --config "$W/misses.json" 2>/dev/null & MISSES=$!; PIDS+=($MISSES)
cat > "$W/thumbor.conf" <<CONF
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '$W/thumbor-storage'
RESULT_STORAGE = None
LOADER = 'thumbor.loaders.http_loader'
ALLOW_UNSAFE_URL = True
QUALITY = 82
CONF
# In its own process group (setsid), so cleanup ends its forked workers too, not only the parent.
setsid thumbor -p 18203 -c "$W/thumbor.conf" --processes 2 -l error >/dev/null 2>&1 & THUMBOR=$!; PIDS+=($THUMBOR)
mkdir -p "$W/static"
sleep 3
curl -sf -o "$W/static/thumb.jpg" "http://127.0.0.1:18201/thumbnail?url=$SRC&w=256&h=256"
curl -sf -o /dev/null "http://127.0.0.1:18202/thumbnail?url=$SRC&w=100"          # original onto disk
curl -sf -o /dev/null "http://127.0.0.1:18203/unsafe/100x0/127.0.0.1:18200/photo.jpg"  # thumbor's storage too
cat > "$W/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $W/nginx.pid; error_log $W/nginx.err;
events { worker_connections 1024; }
http { access_log off; client_body_temp_path $W; proxy_temp_path $W; fastcgi_temp_path $W; uwsgi_temp_path $W; scgi_temp_path $W;
  # As its operators run it for static files.
  sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 100000; open_file_cache max=100 inactive=60s;
  server { listen 127.0.0.1:18204; location / { root $W/static; try_files /thumb.jpg =404; } } }
CONF
nginx -c "$W/nginx.conf" & PIDS+=($!)
cat > "$W/vary.lua" <<'LUA'
-- PATH_FMT holds "{N}" where the varying width goes; the rest is percent-encoded
-- text, so it must not pass through string.format.
counter = 0
local fmt = os.getenv("PATH_FMT")
local at = string.find(fmt, "{N}", 1, true)
local before, after = string.sub(fmt, 1, at - 1), string.sub(fmt, at + 3)
request = function()
  counter = counter + 1
  return wrk.format("GET", before .. tostring(100 + (counter % 300)) .. after)
end
LUA
sleep 1
run() { # URL [lua] -> "req/s p99ms non-2xx"
  local extra=(); [ -n "${2:-}" ] && extra=(-s "$W/vary.lua")
  wrk -t1 -c64 -d10s --latency "${extra[@]}" "$1" | awk '
    /Requests\/sec/ {rps=$2}
    /Non-2xx/ {bad=$NF}
    /^ +99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; p99=v}
    END {print rps, p99, bad+0}'
}
for i in $(seq "$ROUNDS"); do
  echo "hits-thumbd $(run "http://127.0.0.1:18201/thumbnail?url=$SRC&w=256&h=256")" >> "$W/results"
  echo "hits-nginx $(run http://127.0.0.1:18204/thumb.jpg)" >> "$W/results"
  echo "misses-thumbd $(PATH_FMT="/thumbnail?url=$SRC&w={N}" run "http://127.0.0.1:18202/" lua)" >> "$W/results"
  echo "misses-thumbor $(PATH_FMT="/unsafe/{N}x0/127.0.0.1:18200/photo.jpg" run "http://127.0.0.1:18203/" lua)" >> "$W/results"
done
hwm() { awk '/VmHWM/ {s+=$2} END {printf "%.0f", s/1024}' "$@" 2>/dev/null; }
echo "rss-thumbd-hits $(hwm /proc/$HITS/status) 0 0" >> "$W/results"
echo "rss-thumbd-misses $(hwm /proc/$MISSES/status) 0 0" >> "$W/results"
echo "rss-thumbor $(hwm $(pgrep -f "thumbor -p 18203" | sed 's|.*|/proc/&/status|')) 0 0" >> "$W/results"
curl -s "http://127.0.0.1:18202/stats" > "$W/stats.json"
python3 - "$W/results" "$W/stats.json" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, i): return statistics.median(float(r[i]) for r in rows if r[0] == name)
print("| case | server | req/s | p99 ms | non-2xx (all rounds) |\n|---|---|---|---|---|")
for case, a, b in [("hits", "thumbd", "nginx"), ("misses", "thumbd", "thumbor")]:
    for s in (a, b):
        bad = sum(int(r[3]) for r in rows if r[0] == f"{case}-{s}")
        print(f"| {case} | {s} | {med(f'{case}-{s}', 1):.0f} | {med(f'{case}-{s}', 2):.1f} | {bad} |")
print(f"\nhits: thumbd/nginx req/s {med('hits-thumbd',1)/med('hits-nginx',1):.2f} (target >= 0.6)")
print(f"misses: thumbd/thumbor req/s {med('misses-thumbd',1)/med('misses-thumbor',1):.2f} (target >= 1.5), "
      f"p99 {med('misses-thumbd',2)/med('misses-thumbor',2):.2f} (target <= 1)")
print(f"peak RSS MB: thumbd hits {med('rss-thumbd-hits',1):.0f}, thumbd misses {med('rss-thumbd-misses',1):.0f}, thumbor (all processes) {med('rss-thumbor',1):.0f}")
stats = json.load(open(sys.argv[2]))
print("misses server /stats render:", stats["render"], "diskStore hits:", stats["diskStore"]["hits"])
print("raw:", rows)
PY
