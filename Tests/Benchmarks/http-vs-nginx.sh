#!/usr/bin/env bash
# HTTP benchmark (issue 3): thumbd's HTTP layer serving a 20 KB body from memory
# (HTTPBench, release build; the body is thumb-20k.jpg of make-inputs.sh) beside nginx
# (worker_processes 1) serving the same file, both on 127.0.0.1, with wrk -t1 -c64
# -d10s --latency, alternating for ROUNDS rounds; prints medians of req/s and p99 and
# the ratios. With perf usable (root, or perf_event_paranoid <= 1) it also prints
# syscalls and context switches per request of each server (one extra round each):
# counts that do not move with the machine's load the way req/s does. Then the
# parser alone (HTTPBench --parse, CPU time per request).
# Usage: Tests/Benchmarks/http-vs-nginx.sh [ROUNDS]      (default 3; any directory)
# From a fresh clone (Debian, Swift 6; installs wrk, nginx, libvips-tools, libjpeg-turbo-progs):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/http-vs-nginx.sh
# A quick trial run: BENCH_SECONDS=2 Tests/Benchmarks/http-vs-nginx.sh 1
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
ROUNDS=${1:-3}
bash .ci/deps.sh wrk nginx
bench_inputs
swift build -c release --product HTTPBench >/dev/null
BIN=$(swift build -c release --show-bin-path)/HTTPBench
bench_init
WORK=$W; chmod 755 "$WORK"   # nginx's worker (user nobody) reads the file
cp "$INPUTS/thumb-20k.jpg" "$WORK/thumb.jpg"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK; proxy_temp_path $WORK; fastcgi_temp_path $WORK; uwsgi_temp_path $WORK; scgi_temp_path $WORK;
  server { listen 127.0.0.1:18081; location / { root $WORK; try_files /thumb.jpg =404; } }
}
CONF
bench_bg "$BIN" 18080 "$WORK/thumb.jpg"; THUMBD=$BENCH_PID
bench_bg nginx -c "$WORK/nginx.conf"; NGINX=$BENCH_PID
bench_wait_port 18080
bench_wait_port 18081
for i in $(seq "$ROUNDS"); do
  echo "thumbd $(bench_wrk http://127.0.0.1:18080/thumb.jpg 64)" >> "$WORK/results"
  echo "nginx $(bench_wrk http://127.0.0.1:18081/thumb.jpg 64)" >> "$WORK/results"
done
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, i): return statistics.median(float(r[i]) for r in rows if r[0] == name)
t_rps, n_rps, t_p99, n_p99 = med("thumbd", 1), med("nginx", 1), med("thumbd", 2), med("nginx", 2)
print("| server | req/s (median) | p99 ms (median) |\n|---|---|---|")
print(f"| thumbd HTTP layer | {t_rps:.0f} | {t_p99:.2f} |\n| nginx (1 worker) | {n_rps:.0f} | {n_p99:.2f} |")
print(f"\nreq/s ratio thumbd/nginx: {t_rps / n_rps:.2f} (target >= 0.7); p99 ratio: {t_p99 / n_p99:.2f} (target <= 2)")
print("raw:", rows)
PY
counts() { # NAME PORT PID: syscalls and context switches per request over a 5 s wrk run (BENCH_SECONDS / 2)
  perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$3" -o "$WORK/perf.$2" 2>/dev/null & local stat=$!
  sleep 0.2
  local n half=$(( ${BENCH_SECONDS:-10} / 2 )); [ "$half" -ge 1 ] || half=1
  n=$(wrk -t1 -c64 -d"${half}s" "http://127.0.0.1:$2/thumb.jpg" | awk '/requests in/ {print $1}')
  kill -INT $stat; wait $stat 2>/dev/null || true
  awk -F, -v n="$n" -v name="$1" '$3 ~ /sys_enter/ {s=$1} $3 ~ /context-switches/ {c=$1}
    END {if (s != "") printf "| %s | %.2f | %.3f |\n", name, s/n, c/n}' "$WORK/perf.$2"
}
echo
if command -v perf >/dev/null && perf stat -e context-switches true >/dev/null 2>&1; then
  echo "| server | syscalls/request | context switches/request |"
  echo "|---|---|---|"
  counts thumbd 18080 "$THUMBD"
  counts nginx 18081 "$(pgrep -P "$NGINX" | head -1)"
  echo
fi
"$BIN" --parse
