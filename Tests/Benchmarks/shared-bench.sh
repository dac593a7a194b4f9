#!/usr/bin/env bash
# What the shared originals store costs thumbd (issue 25), on 127.0.0.1 with one SeaweedFS and a
# plain http origin, three release daemons with memory caches off (every request renders):
#   A  with diskStore.shared: its origin misses also write each original to the store (background);
#   B  without a shared store: the same origin misses, for the writes' share of a storm;
#   C  with diskStore.shared and an empty disk: every render's original comes from the store
#      (a look-up, the copy to its disk), against A rendering the same originals from its own disk.
# thumbd's CPU is the daemon's and its render workers' (utime + stime from /proc, the daemon's
# waited-for children included), read when it is idle again and, for A, when every write is done.
# SeaweedFS and the origin are their own processes, not counted. Each round: N new sources as
# misses on B then A, then the same N rendered again by A (local disk) and by C (shared store).
# Targets: C/A(disk) CPU per render <= 1.3; A/B CPU per origin miss <= 1.05. Wall p50 per request too.
# Usage: Tests/Benchmarks/shared-bench.sh [ROUNDS] [N]   (default 5 rounds of 40)
# Environment: INPUT, a make-inputs.sh name without .jpg (default jpeg-4mp).
# A quick trial run: Tests/Benchmarks/shared-bench.sh 1 5
set -euo pipefail
ROUNDS=${1:-5}; N=${2:-40}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh
BIN=$(bench_release_bin)
bench_inputs
bench_init
trap 'bench_cleanup; rm -f $(bench_weed_sockets 18380)' EXIT
HZ=$(getconf CLK_TCK)
KEY=bench-key; SECRET=bench-secret-$RANDOM$RANDOM
# The fleet's key (diskStore.shared.keyFile): both instances sign and check sidecars with it.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$W/shared.key"

mkdir "$W/origin"
cp "$INPUTS/${INPUT:-jpeg-4mp}.jpg" "$W/origin/photo.jpg"
for n in warm $(seq $((N * ROUNDS))); do ln "$W/origin/photo.jpg" "$W/origin/h$n.jpg"; done
bench_origin "$W/origin" 18388

bench_weed 18380 "$KEY" "$SECRET" fleet

daemon() { # NAME PORT SHARED(0/1)
  local shared=""
  [ "$3" = 1 ] && shared=', "shared": {"bucket": "fleet", "prefix": "originals/", "keyFile": "'"$W/shared.key"'"}'
  cat > "$W/$1.json" <<CONF
{"listen": "127.0.0.1:$2", "memoryCacheBytes": 0, "origin": {"allowPrivateNetworks": true},
 "diskStore": {"path": "$W/store-$1"$shared}, "log": {"accessLog": false},
 "s3": {"endpoint": "http://127.0.0.1:18386", "accessKeyId": "$KEY", "secretAccessKey": "$SECRET", "timeoutSeconds": 10}}
CONF
  bench_daemon "$BIN" "$W/$1.json" "$2" "$W/$1.log"
  echo "$BENCH_PID" > "$W/$1.pid"
}
daemon a 18390 1; daemon b 18391 0; daemon c 18392 1

# The daemon's CPU with its render workers' (live children) and the children it has waited for.
cpu_ticks() { # NAME
  local pid; pid=$(cat "$W/$1.pid")
  local own; own=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat")
  local kids=0
  for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
    kids=$((kids + $(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)))
  done
  echo $((own + kids))
}
stat_of() { curl -sf --max-time 5 "http://127.0.0.1:$1/stats"; }
# Idle: nothing rendering, queued or downloading; for A also every write of the round done.
wait_idle() { # PORT [WRITES]
  for _ in $(seq 600); do
    stat_of "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin); want = int(sys.argv[1])
ok = s["render"]["active"] == 0 and s["render"]["queued"] == 0 and s["origin"]["inFlight"] == 0
sys.exit(0 if ok and (want < 0 or s["sharedStore"]["writes"] + s["sharedStore"]["writeFailures"] >= want) else 1)' "${2:--1}" \
      && { sleep 0.2; return 0; }
    sleep 0.1
  done
  echo "the daemon on $1 did not go idle" >&2; return 1
}
get() { # PORT NAME EXPECTED-X-CACHE -> prints seconds
  local r; r=$(curl -s -o /dev/null -w '%{http_code} %header{x-cache} %{time_total}' --max-time 60 \
    "http://127.0.0.1:$1/thumbnail?url=http%3A%2F%2F127.0.0.1%3A18388%2Fh$2.jpg&w=256&format=jpeg")
  case "$r" in "200 $3 "*) echo "${r##* }" ;; *) echo "h$2 on $1: $r (wanted 200 $3)" >&2; exit 1 ;; esac
}
phase() { # KIND NAME PORT X-CACHE FIRST LAST [WRITES]
  local before; before=$(cpu_ticks "$2")
  for n in $(seq "$5" "$6"); do get "$3" "$n" "$4" >> "$W/wall-$1"; done
  wait_idle "$3" "${7:-}"
  echo "$1 $r $(( $(cpu_ticks "$2") - before ))" >> "$W/results"
}
# Warm-up: the codecs, libcurl and the workers of each daemon.
get 18391 warm origin >/dev/null; get 18390 warm origin >/dev/null; wait_idle 18390 1; get 18392 warm disk >/dev/null
for r in $(seq 0 $((ROUNDS - 1))); do
  first=$((r * N + 1)); last=$((r * N + N))
  phase storm-plain b 18391 origin $first $last
  phase storm-shared a 18390 origin $first $last $((1 + last))
  phase local-disk a 18390 disk $first $last
  phase shared-store c 18392 disk $first $last
done
python3 - "$W" "$HZ" "$N" "$ROUNDS" "$BIN" "$(stat_of 18390)" "$(stat_of 18392)" "${INPUT:-jpeg-4mp}" <<'PY'
import json, statistics, sys
w, hz, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [l.split() for l in open(w + "/results")]
kinds = ["storm-plain", "storm-shared", "local-disk", "shared-store"]
per = {k: [int(r[2]) / hz / n * 1000 for r in rows if r[0] == k] for k in kinds}
wall = {k: sorted(float(x) * 1000 for x in open(f"{w}/wall-{k}")) for k in kinds}
print(f"BIN = {sys.argv[5]}, {rounds} rounds of {n} sources, input {sys.argv[8]}, memory caches off\n")
print("| requests | thumbd CPU ms per request (median of rounds) | min | max | wall p50 ms | wall p90 ms |")
print("|---|---|---|---|---|---|")
for k in kinds:
    p = wall[k]
    print(f"| {k} | {statistics.median(per[k]):.2f} | {min(per[k]):.2f} | {max(per[k]):.2f} | "
          f"{p[len(p) // 2]:.1f} | {p[int(len(p) * 0.9)]:.1f} |")
def ratio(a, b, target):
    rs = [x / y for x, y in zip(per[a], per[b])]
    print(f"{a}/{b}: {statistics.median(per[a]) / statistics.median(per[b]):.3f} of the medians, "
          f"{statistics.median(rs):.3f} median of the rounds' ratios (min {min(rs):.3f}, max {max(rs):.3f}; target <= {target})")
print()
ratio("shared-store", "local-disk", 1.3)
ratio("storm-shared", "storm-plain", 1.05)
print("A sharedStore:", json.dumps(json.loads(sys.argv[6])["sharedStore"]))
print("C sharedStore:", json.dumps(json.loads(sys.argv[7])["sharedStore"]))
PY
