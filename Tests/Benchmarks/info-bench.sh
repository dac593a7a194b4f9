#!/usr/bin/env bash
# The three performance targets of /info (issue 21), one binary, everything on 127.0.0.1.
#  get:   GET /info answered from memory against a /thumbnail memory hit of the same source
#         (w=256&h=256), one daemon, wrk -t1 -c64 -d10s runs alternating, ROUNDS each;
#         target: info/thumbnail req/s >= 0.9.
#  batch: POST /info of 100 distinct sources whose facts are cached (the origin serves the
#         4 MP JPEG of make-inputs.sh under 100 names; one POST warms them): 200 sequential
#         POSTs on one keep-alive connection, each answer checked (100 items, no "error");
#         target: median <= 5 ms.
#  disk:  `BIN info FILE` against `BIN thumbnail FILE OUT --w 256 --h 256 --fit cover` of the
#         12 MP JPEGs of make-inputs.sh (progressive and baseline), whole processes, the two
#         alternating (PAIRS pairs after one warm-up pair), CPU time (user + sys, from wait4)
#         and wall time; target: info/thumbnail CPU <= 1.2. `BIN --version` runs in the same
#         turn: its CPU time is the process's own floor (start, libraries), also taken off both.
# Prints a table of medians and the ratios.
# Usage: Tests/Benchmarks/info-bench.sh BIN [ROUNDS]   (default 5 rounds; any directory)
# Environment: PAIRS (default 15) for the disk case; BENCH_SECONDS as in lib.sh.
# From a fresh clone (Debian, Swift 6; installs wrk, libvips-tools, libjpeg-turbo-progs):
#   git clone URL thumbd && cd thumbd && swift build -c release --product thumbd
#   Tests/Benchmarks/info-bench.sh .build/release/thumbd
# A quick trial run: BENCH_SECONDS=2 PAIRS=3 Tests/Benchmarks/info-bench.sh BIN 1
set -euo pipefail
BIN=$(realpath "${1:?usage: info-bench.sh BIN [ROUNDS]}"); ROUNDS=${2:-5}; PAIRS=${PAIRS:-15}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh wrk
bench_inputs
bench_init
mkdir "$W/origin"
cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
for n in $(seq 100); do ln "$W/origin/photo.jpg" "$W/origin/p$n.jpg"; done   # 100 names, one file
bench_origin "$W/origin" 18350
SRC="http%3A%2F%2F127.0.0.1%3A18350%2Fphoto.jpg"
cat > "$W/daemon.json" <<CONF
{"listen": "127.0.0.1:18351", "memoryCacheBytes": 268435456, "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
bench_daemon "$BIN" "$W/daemon.json" 18351 "$W/daemon.log"
D=http://127.0.0.1:18351

# get: warm both (the render computes the facts; the second /info must be a memory hit).
curl -sf --max-time 60 -o /dev/null "$D/thumbnail?url=$SRC&w=256&h=256"
curl -sf --max-time 60 -o /dev/null "$D/info?url=$SRC"
for path in "thumbnail?url=$SRC&w=256&h=256" "info?url=$SRC"; do
  curl -sf --max-time 60 -D - -o /dev/null "$D/$path" | grep -qi '^x-cache: memory' \
    || { echo "not a memory hit: /$path" >&2; exit 1; }
done
for i in $(seq "$ROUNDS"); do
  echo "thumbnail $(bench_wrk "$D/thumbnail?url=$SRC&w=256&h=256" 64)" >> "$W/results"
  echo "info $(bench_wrk "$D/info?url=$SRC" 64)" >> "$W/results"
done

# batch: warm with one POST (up to 3 tries, for items a busy queue turned away), then time.
python3 - "$W/batch" <<'PY'
import http.client, json, statistics, sys, time
body = json.dumps({"items": [{"url": f"http://127.0.0.1:18350/p{n}.jpg"} for n in range(1, 101)]})
conn = http.client.HTTPConnection("127.0.0.1", 18351, timeout=120)
def post():
    conn.request("POST", "/info", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, r.read()
def check(status, data):
    items = json.loads(data)["items"]
    bad = [i for i in items if "error" in i]
    return status == 200 and len(items) == 100 and not bad, bad[:1]
for attempt in range(3):
    ok, bad = check(*post())
    if ok: break
else:
    sys.exit(f"the warming POST /info still has errors: {bad}")
times, answers = [], []
for _ in range(200):
    t = time.perf_counter()
    answers.append(post())
    times.append((time.perf_counter() - t) * 1000)
for a in answers:
    ok, bad = check(*a)
    if not ok: sys.exit(f"a timed POST /info answer is wrong: status {a[0]}, {bad}")
times.sort()
with open(sys.argv[1], "w") as f:
    print(statistics.median(times), times[int(0.9 * len(times)) - 1], times[0], times[-1], len(answers[0][1]), file=f)
PY
STATS=$(curl -sf --max-time 10 "$D/stats")

# disk: whole processes, alternating, after one warm-up pair each.
for f in jpeg-12mp-progressive jpeg-12mp-baseline; do
  python3 - "$BIN" "$INPUTS/$f.jpg" "$W/out.jpg" "$PAIRS" "$f" >> "$W/disk" <<'PY'
import os, statistics, subprocess, sys, time
bin, src, out, pairs, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
cmds = {"info": [bin, "info", src],
        "thumbnail": [bin, "thumbnail", src, out, "--w", "256", "--h", "256", "--fit", "cover"],
        "floor": [bin, "--version"]}
def run(cmd):  # (cpu s, wall s) of one whole process
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0: sys.exit(f"{cmd} failed: {status}")
    return ru.ru_utime + ru.ru_stime, wall
got = {"info": [], "thumbnail": [], "floor": []}
for i in range(pairs + 1):
    for k in ("info", "thumbnail", "floor"):
        r = run(cmds[k])
        if i: got[k].append(r)
cpu = [a[0] / b[0] for a, b in zip(got["info"], got["thumbnail"])]
wall = [a[1] / b[1] for a, b in zip(got["info"], got["thumbnail"])]
med = lambda k, j: statistics.median(r[j] for r in got[k])
floor = med("floor", 0)
print(name, med("info", 0), med("thumbnail", 0), med("info", 1), med("thumbnail", 1),
      statistics.median(cpu), min(cpu), max(cpu), statistics.median(wall),
      floor, (med("info", 0) - floor) / (med("thumbnail", 0) - floor))
PY
done

python3 - "$W/results" "$W/batch" "$W/disk" "$BIN" "$ROUNDS" "$PAIRS" "$STATS" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, i): return statistics.median(float(r[i]) for r in rows if r[0] == name)
print(f"BIN = {sys.argv[4]}, {sys.argv[5]} rounds, {sys.argv[6]} pairs\n")
print("GET, wrk -t1 -c64, one daemon, runs alternating\n")
print("| case | req/s (median) | p99 ms (median) | non-2xx |\n|---|---|---|---|")
for case in ("thumbnail", "info"):
    bad = sum(int(r[3]) for r in rows if r[0] == case)
    print(f"| {case} memory hit | {med(case, 1):.0f} | {med(case, 2):.2f} | {bad} |")
pairs = [float(i[1]) / float(t[1]) for t, i in zip(rows[0::2], rows[1::2])]
print(f"\nGET /info / /thumbnail req/s: {med('info', 1) / med('thumbnail', 1):.3f} of the medians, "
      f"{statistics.median(pairs):.3f} median of the rounds' ratios (min {min(pairs):.3f}, max {max(pairs):.3f}; "
      "target >= 0.9)")
b = [float(x) for x in open(sys.argv[2]).read().split()]
print(f"\nPOST /info, 100 cached sources, 200 sequential POSTs on one connection ({b[4]:.0f}-byte answers):")
print(f"median {b[0]:.2f} ms, p90 {b[1]:.2f} ms, min {b[2]:.2f} ms, max {b[3]:.2f} ms (target median <= 5 ms)")
print("\nFacts of a 12 MP JPEG on disk against a 256-px cover render, whole processes, medians\n")
print("| input | info CPU s | thumbnail CPU s | info wall s | thumbnail wall s | CPU ratio (min-max) | wall ratio "
      "| --version CPU s | CPU ratio less it |")
print("|---|---|---|---|---|---|---|---|---|")
for l in open(sys.argv[3]):
    n, *v = l.split(); v = [float(x) for x in v]
    print(f"| {n} | {v[0]:.3f} | {v[1]:.3f} | {v[2]:.3f} | {v[3]:.3f} | {v[4]:.3f} ({v[5]:.3f}-{v[6]:.3f}) | {v[7]:.3f} "
          f"| {v[8]:.3f} | {v[9]:.3f} |")
print("(target: CPU ratio <= 1.2)")
info = json.loads(sys.argv[7]).get("info")
print("\n/stats info:", json.dumps(info), "\nraw:", rows)
PY
