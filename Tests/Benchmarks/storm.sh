#!/usr/bin/env bash
# Issue 9's render storm against a release build, everything on 127.0.0.1: wrk -t1 -c32 for
# 40 s, every request a new source (jpeg-12mp-progressive.jpg of make-inputs.sh served under
# ?n=1,2,…, w=256), workers 2, memoryCacheBytes 64 MiB. VmRSS and Threads are sampled about
# every second from /proc, through the storm and 10 s after it. Targets (Testing.md § Benchmarks
# and fuzzing):
#   peak  <= memoryCacheBytes + decode working set admitted + 64 MiB, where the working set is
#            what the render queue admits at once: workers x the per-render estimate
#            (coefficients of the whole progressive image, the reduced bitmap, the original),
#            capped by maxDecodeMemoryBytes;
#   after <= memoryCacheBytes + 64 MiB, 10 s after the storm's last render (renders already
#            decoding when wrk stops finish; queued ones whose clients left are skipped,
#            render.abandoned; the RSS 10 s after wrk stops is shown too).
# Exit status 1 when either is missed.
# Usage: [THUMBD_BIN=path] Tests/Benchmarks/storm.sh [SECONDS]   (default 40; any directory;
#        without THUMBD_BIN it builds and runs the release thumbd)
# From a fresh clone (Debian, Swift 6; installs wrk, libvips-tools, libjpeg-turbo-progs):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/storm.sh
# A quick trial run: Tests/Benchmarks/storm.sh 10   (the sampling goes on 30 s after the storm)
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
SECONDS_STORM=${1:-40}
MIB=$((1 << 20))
CACHE=$((64 * MIB)) DECODE=$((512 * MIB)) WORKERS=2
bash .ci/deps.sh wrk
bench_inputs
BIN=$(bench_release_bin)
bench_init
mkdir -p "$W/origin"
cp "$INPUTS/jpeg-12mp-progressive.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18320
cat > "$W/storm.json" <<CONF
{"listen": "127.0.0.1:18321", "workers": $WORKERS, "memoryCacheBytes": $CACHE,
 "diskStore": {"path": "$W/store", "maxBytes": $((256 * MIB))},
 "limits": {"maxDecodeMemoryBytes": $DECODE},
 "origin": {"allowPrivateNetworks": true},
 "log": {"accessLog": false, "level": "warning"}}
CONF
bench_daemon "$BIN" "$W/storm.json" 18321 "$W/daemon.log"; DPID=$BENCH_PID
cat > "$W/storm.lua" <<'LUA'
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/thumbnail?url=http%3A%2F%2F127.0.0.1%3A18320%2Fphoto.jpg%3Fn%3D"
                    .. tostring(counter) .. "&w=256")
end
LUA
TOTAL=$((SECONDS_STORM + 30))
# About every second: VmRSS KiB, threads, the renders running + queued (/stats), which go on
# after wrk stops (renders under way finish; queued ones it abandoned are skipped), and ms since the start.
( T0=$(date +%s%N)
  for ((i = 0; i < 2 * TOTAL; i++)); do
    t=$(( ($(date +%s%N) - T0) / 1000000 ))
    [ "$t" -ge $((TOTAL * 1000)) ] && break
    rt=$(awk '/^VmRSS/ {r=$2} /^Threads/ {t=$2} END {print r+0, t+0}' "/proc/$DPID/status") || break
    q=$(curl -s --max-time 1 http://127.0.0.1:18321/stats \
        | python3 -c 'import json, sys; r = json.load(sys.stdin)["render"]; print(r["active"] + r["queued"])' 2>/dev/null \
        || echo -1)
    echo "$rt $q $t"
    sleep 0.5
  done > "$W/rss" ) & SAMPLER=$!; BENCH_PIDS+=("$SAMPLER")
wrk -t1 -c32 -d"${SECONDS_STORM}s" --timeout 30s -s "$W/storm.lua" http://127.0.0.1:18321/ > "$W/wrk.txt"
wait "$SAMPLER" || true
curl -s --max-time 10 http://127.0.0.1:18321/stats > "$W/stats.json"
python3 - "$W" "$SECONDS_STORM" "$CACHE" "$DECODE" "$WORKERS" <<'PY'
import json, os, struct, sys
w, storm, cache, decode, workers = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:])
MIB = 1 << 20
data = open(f"{w}/origin/photo.jpg", "rb").read()
# Configuration.md maxDecodeMemoryBytes: a progressive JPEG's estimate is its whole
# coefficient buffer (pixels x components x 2) + the bitmap at the DCT scale chosen (1/8 here)
# + the original + the result.
i = 2
while True:
    marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
    if marker in (0xC0, 0xC1, 0xC2):
        h, wd, comps = struct.unpack(">HHB", data[i + 5:i + 10]); break
    i += 2 + length
out_w, out_h = 256, round(256 * h / wd)
per = wd * h * comps * 2 + (wd // 8) * (h // 8) * 4 + len(data) + out_w * out_h * 4
admitted = min(decode, workers * per)
rows = [tuple(map(int, l.split())) for l in open(f"{w}/rss") if l.strip()]
peak = max(r[0] for r in rows) * 1024
def at(ms):  # the first sample at or after ms (samples carry their time since the start)
    return next((r for r in rows if r[3] >= ms), rows[-1])
after_wrk = at((storm + 10) * 1000)[0] * 1024
# The queue has drained at the first sample after the storm with nothing running or queued.
drained_ms = next((r[3] for r in rows if r[3] >= storm * 1000 and r[2] == 0), rows[-1][3])
after = at(drained_ms + 10_000)[0] * 1024
threads = max(r[1] for r in rows)
stats = json.load(open(f"{w}/stats.json"))
wrk = open(f"{w}/wrk.txt").read()
rps = next(l.split()[1] for l in wrk.splitlines() if l.startswith("Requests/sec"))
peak_bound, after_bound = cache + admitted + 64 * MIB, cache + 64 * MIB
print(f"storm: {storm} s, wrk -c32, workers {workers}, memoryCacheBytes {cache // MIB} MiB, "
      f"per-render estimate {per / MIB:.0f} MiB, admitted working set {admitted / MIB:.0f} MiB")
print("| storm | req/s | renders | failures | peak RSS MiB (target) | RSS 10 s after wrk | "
      "queue drained | RSS 10 s after drained (target) | peak threads |")
print("|---|---|---|---|---|---|---|---|---|")
print(f"| 12 MP progressive | {rps} | {stats['render']['completed']} | {stats['render']['failures']} | "
      f"{peak / MIB:.0f} (<= {peak_bound / MIB:.0f}) | {after_wrk / MIB:.0f} | +{drained_ms / 1000 - storm:.0f} s | "
      f"{after / MIB:.0f} (<= {after_bound / MIB:.0f}) | {threads} |")
print("samples (s: RSS MiB / renders running+queued):",
      " ".join(f"{r[3] / 1000:.0f}:{r[0] // 1024}/{r[2]}" for r in rows))
if os.environ.get("STORM_VERBOSE"):
    print(wrk)
sys.exit(0 if peak <= peak_bound and after <= after_bound else 1)
PY
