#!/usr/bin/env bash
# Soak test of the release daemon on loopback for MINUTES (default 10): hits,
# misses, bad sources (404, corrupt, truncated, not an image, over maxSourceBytes,
# over maxSourcePixels), bad requests, purges, slow clients (request dripped in,
# response read slowly, silent connections cut at http.requestTimeoutSeconds),
# clients that disconnect early, and a config reload (SIGHUP, quality changed)
# every minute; and the round-4 features: POST /info batches (a few sources new
# each time, so their downloads and facts jobs run; a client that leaves before
# some answers), GET /info, animated GIF to animated WebP, attention crops.
# Samples RSS (the daemon's and, summed with it, its render workers'), open fds,
# threads and /stats every SAMPLE_SECONDS (default 10) into soak.csv (kept in
# SOAK_OUT, default .build-soak/).
# Fails when:
#  - any response status is not one its request may get (every 5xx included),
#    or a request that must be answered was not;
#  - RSS is not flat: the median RSS (daemon plus workers) of the last third of
#    the run is more than 10 % above the median of the middle third (the first
#    third is warm-up).
#    Medians, not peaks: a decode of a large source lifts RSS by ~200 MB for a
#    sample or two (malloc returns it after), which a leak does not undo;
#  - open fds are not back to the idle baseline (+2, and 3 for each render worker
#    started since: its channel, pidfd and output pipe) within 20 s after the load;
#  - threads are not back to the idle baseline (+8: Dispatch keeps idle worker
#    threads a while) within 20 s after the load, or ever passed it by 64
#    (a thread per request or per connection would).
# The sources: the standard inputs of make-inputs.sh and the repository's fixture photo
# Tests/ThumbCodecTests/Fixtures/rocket.jpg, and broken files made from them.
# Usage: Tests/Benchmarks/soak.sh [MINUTES]        (default 10, fractions allowed; any directory)
# From a fresh clone (Debian, Swift 6; installs libvips-tools, libjpeg-turbo-progs for the inputs):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/soak.sh
# A quick trial run: SAMPLE_SECONDS=5 Tests/Benchmarks/soak.sh 1.5   (one reload; too short to
#   judge RSS growth)
set -euo pipefail
cd "$(dirname "$0")/../.."
. Tests/Benchmarks/lib.sh
MINUTES=${1:-10}
OUT=${SOAK_OUT:-$PWD/.build-soak}
mkdir -p "$OUT"
bench_inputs
BIN=$(bench_release_bin)
bench_init
ROCKET=Tests/ThumbCodecTests/Fixtures/rocket.jpg
mkdir -p "$W/origin"
cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"                      # 2560x1600, misses
cp "$ROCKET" "$W/origin/small.jpg"                                   # 640x427, hits
cp Tests/ThumbCodecTests/Fixtures/animation/rotating-squares.gif "$W/origin/anim.gif"   # animated
head -c 60000 "$INPUTS/jpeg-4mp.jpg" > "$W/origin/truncated.jpg"     # a JPEG cut short
head -c 20000 /dev/urandom > "$W/origin/noise.jpg"                   # not an image
{ head -c 2000 "$ROCKET"; head -c 20000 /dev/urandom; } > "$W/origin/corrupt.jpg"
{ cat "$INPUTS/jpeg-12mp-baseline.jpg"; head -c 9000000 /dev/zero; } > "$W/origin/huge.jpg"  # > maxSourceBytes
python3 - "$W/origin/pixels.png" <<'PY'
# 9000x9000 grey PNG (81 MP, > maxSourcePixels), a few hundred KB.
import struct, sys, zlib
w = h = 9000
raw = zlib.compress(b"".join(b"\0" + bytes(w) for _ in range(h)), 9)
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                                + chunk(b"IDAT", raw) + chunk(b"IEND", b""))
PY
ORIGIN_PORT=18400 PORT=18401
bench_origin "$W/origin" $ORIGIN_PORT
write_config() { # QUALITY
  cat > "$W/thumbd.json" <<CONF
{"listen": "127.0.0.1:$PORT", "memoryCacheBytes": 33554432,
 "diskStore": {"path": "$W/store", "maxBytes": 134217728},
 "limits": {"maxSourceBytes": 8388608, "maxSourcePixels": 50000000},
 "origin": {"allowPrivateNetworks": true, "negativeCacheSeconds": 2},
 "http": {"requestTimeoutSeconds": 5, "idleTimeoutSeconds": 15},
 "output": {"defaultQuality": $1}, "log": {"accessLog": false}}
CONF
}
write_config 82
bench_daemon "$BIN" "$W/thumbd.json" $PORT "$OUT/thumbd.log"
echo "soak: $MINUTES min, daemon pid $BENCH_PID, samples in $OUT/soak.csv"
python3 - "$BENCH_PID" "$PORT" "$ORIGIN_PORT" "$MINUTES" "${SAMPLE_SECONDS:-10}" "$OUT/soak.csv" "$W/thumbd.json" <<'PY'
import http.client, json, os, random, signal, socket, statistics, sys, threading, time, urllib.parse

pid, port, origin_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
minutes, sample_every, csv_path, config_path = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7]
src = lambda name: urllib.parse.quote(f"http://127.0.0.1:{origin_port}/{name}", safe="")
lock = threading.Lock()
counts, unexpected = {}, []
stop = threading.Event()

def record(kind, status, allowed, detail=""):
    with lock:
        counts[(kind, status)] = counts.get((kind, status), 0) + 1
        if status not in allowed and len(unexpected) < 50:
            unexpected.append(f"{kind}: {status} {detail}")

def rss_kb(p):
    try:
        return int(next(l.split()[1] for l in open(f"/proc/{p}/status").read().splitlines() if l.startswith("VmRSS:")))
    except (OSError, StopIteration):
        return 0

def workers():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit(): continue
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid): found.append(int(entry))
    return found

def proc():
    """RSS of the daemon plus its render workers, the daemon's own RSS, its fds and threads."""
    status = open(f"/proc/{pid}/status").read()
    field = lambda name: int(next(l.split()[1] for l in status.splitlines() if l.startswith(name + ":")))
    own = field("VmRSS")
    return own + sum(rss_kb(w) for w in workers()), len(os.listdir(f"/proc/{pid}/fd")), field("Threads"), own

class Client:
    """A keep-alive client; a broken connection is reconnected (and counted as an error)."""
    def __init__(self): self.c = None
    def get(self, path, method="GET"):
        for attempt in (0, 1):
            try:
                if self.c is None: self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                self.c.request(method, path)
                r = self.c.getresponse(); body = r.read()
                if r.getheader("Connection", "").lower() == "close": self.close()
                return r.status, body
            except (OSError, http.client.HTTPException) as e:
                self.close()
                # A keep-alive connection the server closed as idle may fail once at reuse.
                if attempt == 1: return f"error {type(e).__name__}", b""
    def close(self):
        if self.c: self.c.close(); self.c = None

def loop(kind, pause, step):
    c = Client()
    while not stop.is_set():
        step(c)
        time.sleep(pause)
    c.close()

def hits(c):
    w = random.choice([64, 128, 256, 320])
    s, _ = c.get(f"/thumbnail?url={src('small.jpg')}&w={w}&h={w}&fit=cover")
    record("hit", s, {200})

def misses(c):
    w = random.randint(40, 1600)
    fmt = random.choice(["jpeg", "webp", "png"])
    gravity = "&gravity=attention" if random.random() < 0.2 else ""
    s, _ = c.get(f"/thumbnail?url={src('photo.jpg')}&w={w}&format={fmt}&fit={random.choice(['inside', 'cover', 'fill'])}&h={w}{gravity}")
    record("miss", s, {200})

def animated(c):
    w = random.randint(24, 200)
    s, _ = c.get(f"/thumbnail?url={src('anim.gif')}&w={w}&format=webp{random.choice(['', '&animated=0'])}")
    record("animated", s, {200})

batch_serial = [0]
def info(c):
    if random.random() < 0.3:
        s, _ = c.get(f"/info?url={src(random.choice(['small.jpg', 'photo.jpg', 'anim.gif']))}")
        record("info", s, {200}); return
    with lock:
        batch_serial[0] += 1; n = batch_serial[0]
    # Known sources and three new ones each time (the same bytes under new URLs: downloads and facts jobs).
    urls = [f"http://127.0.0.1:{origin_port}/{name}" for name in ("small.jpg", "photo.jpg", "anim.gif", "missing.jpg")]
    urls += [f"http://127.0.0.1:{origin_port}/photo.jpg?batch={n}&i={i}" for i in range(3)]
    body = json.dumps({"items": [{"url": u} for u in urls]})
    if random.random() < 0.2:
        # A client that leaves before the answer: its items are abandoned.
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(f"POST /info HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
            record("info-batch-left", "left", {"left"})
        except OSError as e:
            record("info-batch-left", f"error {type(e).__name__}", set())
        return
    try:
        if c.c is None: c.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.c.request("POST", "/info", body=body, headers={"Content-Type": "application/json"})
        r = c.c.getresponse(); r.read()
        record("info-batch", r.status, {200})
    except (OSError, http.client.HTTPException) as e:
        c.close(); record("info-batch", f"error {type(e).__name__}", set())

BAD = [("missing.jpg", {404}), ("truncated.jpg", {200, 422}), ("noise.jpg", {415}), ("corrupt.jpg", {415, 422}),
       ("huge.jpg", {422}), ("pixels.png", {422})]
def bad(c):
    if random.random() < 0.1:
        s, _ = c.get(f"/thumbnail?url={src('photo.jpg')}&w=abc"); record("bad-request", s, {400}); return
    if random.random() < 0.1:
        s, _ = c.get(f"/cache?url={src(random.choice(['photo.jpg', 'small.jpg', 'missing.jpg']))}", "DELETE")
        record("purge", s, {200, 204}); return
    name, allowed = random.choice(BAD)
    s, _ = c.get(f"/thumbnail?url={src(name)}&w={random.randint(50, 300)}")
    record(f"bad-source {name}", s, allowed)

def slow_client():
    while not stop.is_set():
        try:
            if random.random() < 0.2:
                # Silent: the server must answer 408 (or just close) at requestTimeoutSeconds.
                with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                    data = s.recv(4096)
                    status = int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else "closed"
                    record("slow-silent", status, {408, "closed"})
                continue
            req = f"GET /thumbnail?url={src('small.jpg')}&w=200 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                for i in range(0, len(req), 8):           # the request dripped in over ~2 s
                    s.sendall(req[i:i + 8]); time.sleep(0.1)
                data = b""
                while chunk := s.recv(512):              # the response read slowly
                    data += chunk; time.sleep(0.01)
                record("slow-client", int(data.split()[1]) if data else "no answer", {200})
        except OSError as e:
            record("slow-client", f"error {type(e).__name__}", set())

def disconnects():
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                w = random.randint(40, 1600)
                req = f"GET /thumbnail?url={src('photo.jpg')}&w={w} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                how = random.choice(["at once", "half request", "after a few bytes"])
                if how == "half request": s.sendall(req[:len(req) // 2])
                else: s.sendall(req)
                if how == "after a few bytes": s.recv(16)
            record("disconnect", how, {how})
        except OSError as e:
            record("disconnect", f"error {type(e).__name__}", set())
        time.sleep(0.2)

def stats():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/stats"); r = c.getresponse(); body = r.read(); c.close()
    record("stats", r.status, {200})
    return json.loads(body)

# Idle baseline: one request answered, nothing in flight.
Client().get(f"/thumbnail?url={src('small.jpg')}&w=64&h=64&fit=cover")
time.sleep(2)
base_rss, base_fds, base_threads, _ = proc()
base_workers = len(workers())
# A render worker started after the baseline holds 3 of the daemon's descriptors while it lives.
fd_bound = lambda: base_fds + 2 + 3 * max(0, len(workers()) - base_workers)
threads = [threading.Thread(target=loop, args=("hit", 0.01, hits)) for _ in range(2)]
threads += [threading.Thread(target=loop, args=("miss", 0.05, misses)),
            threading.Thread(target=loop, args=("bad", 0.05, bad)),
            threading.Thread(target=loop, args=("animated", 0.2, animated)),
            threading.Thread(target=loop, args=("info", 0.3, info)),
            threading.Thread(target=slow_client), threading.Thread(target=slow_client),
            threading.Thread(target=disconnects)]
for t in threads: t.start()
start = time.monotonic(); end = start + minutes * 60
rows, reloads, quality = [], 0, 82
csv = open(csv_path, "w")
csv.write("seconds,rss_kb,fds,threads,requests_total,connections_open,memory_cache_bytes,disk_store_bytes,"
          "origin_fetches,render_completed,render_queued,render_rejected,daemon_rss_kb,workers\n")
next_sample, next_reload = start, start + 60
while time.monotonic() < end:
    now = time.monotonic()
    if now >= next_reload:
        quality = 80 if quality == 82 else 82
        text = open(config_path).read().replace(f'"defaultQuality": {162 - quality}', f'"defaultQuality": {quality}')
        open(config_path, "w").write(text)
        os.kill(pid, signal.SIGHUP); reloads += 1; next_reload += 60
    if now >= next_sample:
        rss, fds, nthreads, own = proc(); s = stats()
        row = [round(now - start), rss, fds, nthreads, s["requests"]["total"], s["connections"]["open"],
               s["memoryCache"]["bytes"], s["diskStore"]["bytes"], s["origin"]["fetches"], s["render"]["completed"],
               s["render"]["queued"], s["render"]["rejected"], own, len(workers())]
        rows.append(row); csv.write(",".join(map(str, row)) + "\n"); csv.flush()
        next_sample += sample_every
    time.sleep(0.2)
stop.set()
for t in threads: t.join(60)
still = [t for t in threads if t.is_alive()]
# Back to idle: fds and threads within their bounds within 20 s.
settle = time.monotonic() + 20
while True:
    rss, fds, nthreads, _ = proc()
    if (fds <= fd_bound() and nthreads <= base_threads + 8) or time.monotonic() > settle: break
    time.sleep(1)
final = stats()
third = max(1, len(rows) // 3)
middle, last = rows[third:2 * third] or rows, rows[2 * third:] or rows
mid_rss, last_rss = statistics.median(r[1] for r in middle), statistics.median(r[1] for r in last)
peak_threads = max(r[3] for r in rows)
print(f"requests: {final['requests']['total']} answered, by status {final['requests']['byStatus']}; {reloads} reloads")
print("by kind and status:")
for (kind, status), n in sorted(counts.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))): print(f"  {kind:28} {status!s:10} {n}")
print(f"RSS MB (daemon + workers): idle {base_rss/1024:.0f}, median middle third {mid_rss/1024:.0f}, median last third {last_rss/1024:.0f}, "
      f"min/median/max {min(r[1] for r in rows)/1024:.0f}/{statistics.median(r[1] for r in rows)/1024:.0f}/{max(r[1] for r in rows)/1024:.0f}, after {rss/1024:.0f}")
print(f"daemon alone, MB: min/median/max {min(r[12] for r in rows)/1024:.0f}/{statistics.median(r[12] for r in rows)/1024:.0f}/{max(r[12] for r in rows)/1024:.0f}; workers at most {max(r[13] for r in rows)}")
print(f"fds: idle {base_fds} with {base_workers} workers, max {max(r[2] for r in rows)}, after {fds} with {len(workers())} workers")
print(f"threads: idle {base_threads}, max {peak_threads}, after {nthreads}")
failures = []
if unexpected: failures.append(f"{len(unexpected)}+ unexpected answers, e.g. {unexpected[:5]}")
if still: failures.append(f"{len(still)} load threads did not finish")
if last_rss > mid_rss * 1.10: failures.append(f"RSS grew: median of the last third {last_rss:.0f} kB > 1.10 x that of the middle third {mid_rss:.0f} kB")
if fds > fd_bound(): failures.append(f"fds not back to baseline: {fds} > {fd_bound()} ({base_fds} + 2, and 3 per worker started since)")
if nthreads > base_threads + 8: failures.append(f"threads not back to baseline: {nthreads} > {base_threads} + 8")
if peak_threads > base_threads + 64: failures.append(f"threads peaked at {peak_threads} > {base_threads} + 64")
if not reloads and minutes > 1: failures.append("no reload happened")   # the first is at 60 s
print("PASS" if not failures else "FAIL:\n  " + "\n  ".join(failures))
sys.exit(1 if failures else 0)
PY
kill -0 "$BENCH_PID" || { echo "FAIL: the daemon died"; exit 1; }
echo "daemon log: $(grep -ci reload "$OUT/thumbd.log" || true) lines mention a reload (kept in $OUT/thumbd.log)"
