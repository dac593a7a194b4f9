#!/usr/bin/env bash
# What an s3:// source costs thumbd (issue 24): a miss read from SeaweedFS against the same
# original read from a plain http origin, both on 127.0.0.1, one release daemon serving both.
# A miss is the whole of it: the download (SigV4 signing by libcurl for s3), the disk store,
# the decode and a 256-px JPEG, and the facts computed after the first render. thumbd's CPU
# (utime + stime of /proc/PID/stat, read when the daemon is idle again) is measured around
# N distinct misses of each kind, the kinds alternating, ROUNDS rounds; SeaweedFS's CPU and
# the http origin's are their own processes', not counted. Target: s3/http CPU per miss <= 1.1.
# The original is the 4 MP JPEG of make-inputs.sh (INPUT=thumb-20k takes its ~20 KB JPEG, where
# the download is a larger share of a miss), under N x ROUNDS names on each side.
# Prints a table of medians and the ratios.
# Usage: Tests/Benchmarks/s3-bench.sh [ROUNDS] [N]   (default 7 rounds of 100 misses; any directory)
# Environment: INPUT, a make-inputs.sh name without .jpg (default jpeg-4mp).
# From a fresh clone (Debian, Swift 6; deps.sh installs SeaweedFS into .venv-s3):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/s3-bench.sh
# A quick trial run: Tests/Benchmarks/s3-bench.sh 1 5
set -euo pipefail
ROUNDS=${1:-7}; N=${2:-100}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh
BIN=$(bench_release_bin)
bench_inputs
bench_init
# SeaweedFS puts its gRPC sockets in /tmp whatever TMPDIR says: remove them with the rest.
trap 'bench_cleanup; rm -f $(bench_weed_sockets 18360)' EXIT
HZ=$(getconf CLK_TCK)
KEY=bench-key; SECRET=bench-secret-$RANDOM$RANDOM

# The http origin: N x ROUNDS names for one file.
mkdir "$W/origin"
cp "$INPUTS/${INPUT:-jpeg-4mp}.jpg" "$W/origin/photo.jpg"
for n in warm $(seq $((N * ROUNDS))); do ln "$W/origin/photo.jpg" "$W/origin/h$n.jpg"; done
bench_origin "$W/origin" 18368

bench_weed 18360 "$KEY" "$SECRET" bench
for n in warm $(seq $((N * ROUNDS))); do
  [ "$("${S3[@]}" -T "$W/origin/photo.jpg" "http://127.0.0.1:18366/bench/s$n.jpg")" = 200 ] \
    || { echo "cannot put s$n.jpg" >&2; exit 1; }
done

cat > "$W/daemon.json" <<CONF
{"listen": "127.0.0.1:18369", "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store"},
 "log": {"accessLog": false},
 "s3": {"endpoint": "http://127.0.0.1:18366", "accessKeyId": "$KEY", "secretAccessKey": "$SECRET", "allowedBuckets": ["bench"]}}
CONF
bench_daemon "$BIN" "$W/daemon.json" 18369 "$W/daemon.log"
PID=$BENCH_PID
D=http://127.0.0.1:18369

cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
# Idle: no render running or queued, no download in flight (the facts after a first render
# run at prefetch priority, after the answer).
wait_idle() {
  for _ in $(seq 600); do
    curl -sf --max-time 5 "$D/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
sys.exit(0 if s["render"]["active"] == 0 and s["render"]["queued"] == 0 and s["origin"]["inFlight"] == 0 else 1)' \
      && { sleep 0.2; return 0; }
    sleep 0.1
  done
  echo "the daemon did not go idle" >&2; return 1
}
miss() { # URL
  local r; r=$(curl -s -o /dev/null -w '%{http_code} %header{x-cache}' --max-time 60 "$D/thumbnail?url=$1&w=256&format=jpeg")
  [ "$r" = "200 origin" ] || { echo "not a miss from the origin: $1 -> $r" >&2; exit 1; }
}
# One warm-up miss each (libcurl, connections, the codecs' first use).
miss "s3%3A%2F%2Fbench%2Fswarm.jpg"; miss "http%3A%2F%2F127.0.0.1%3A18368%2Fhwarm.jpg"; wait_idle
for r in $(seq 0 $((ROUNDS - 1))); do
  for kind in s3 http; do
    before=$(cpu_ticks); start=$(date +%s.%N)
    for n in $(seq $((r * N + 1)) $((r * N + N))); do
      if [ "$kind" = s3 ]; then miss "s3%3A%2F%2Fbench%2Fs$n.jpg"; else miss "http%3A%2F%2F127.0.0.1%3A18368%2Fh$n.jpg"; fi
    done
    wait_idle
    after=$(cpu_ticks); end=$(date +%s.%N)
    echo "$kind $r $((after - before)) $(echo "$end - $start" | bc)" >> "$W/results"
  done
done
STATS=$(curl -sf --max-time 10 "$D/stats")

python3 - "$W/results" "$HZ" "$N" "$ROUNDS" "$BIN" "$STATS" "${INPUT:-jpeg-4mp}" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
hz, n, rounds = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per = {k: [int(r[2]) / hz / n * 1000 for r in rows if r[0] == k] for k in ("s3", "http")}
wall = {k: [float(r[3]) / n * 1000 for r in rows if r[0] == k] for k in ("s3", "http")}
print(f"BIN = {sys.argv[5]}, {rounds} rounds of {n} distinct misses per kind, kinds alternating, input {sys.argv[7]}\n")
print("| source | thumbd CPU ms per miss (median) | min | max | wall ms per miss (median, incl. idle wait) |")
print("|---|---|---|---|---|")
for k in ("http", "s3"):
    print(f"| {k} | {statistics.median(per[k]):.2f} | {min(per[k]):.2f} | {max(per[k]):.2f} | {statistics.median(wall[k]):.1f} |")
ratios = [a / b for a, b in zip(per["s3"], per["http"])]
print(f"\ns3/http CPU per miss: {statistics.median(per['s3']) / statistics.median(per['http']):.3f} of the medians, "
      f"{statistics.median(ratios):.3f} median of the rounds' ratios (min {min(ratios):.3f}, max {max(ratios):.3f}; target <= 1.1)")
print("/stats origin:", json.dumps(json.loads(sys.argv[6])["origin"]))
print("raw:", rows)
PY
