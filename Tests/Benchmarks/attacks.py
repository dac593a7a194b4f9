#!/usr/bin/env python3
"""Issue 19's attacks against a release thumbd, everything on 127.0.0.1.

Each case gets a fresh daemon with the default limits (workers 2; the exceptions
are noted in the case) and a loopback origin. While a case runs, the daemon's
VmRSS and CPU time are sampled every 0.25 s, and a normal 256-px thumbnail of a
new source is requested every second beside the attack. A case holds when:
  - every attack request is answered within limits.maxRenderSeconds + 1 s,
  - the peak RSS stays within memoryCacheBytes + maxDecodeMemoryBytes
    + 2 x http.maxPendingResponseBytes + 64 MiB (downloads stream to disk: no
    download budget sits in memory),
  - the normal requests beside it are answered within 1 s,
  - a hostile file's four requests cost at most 4 x maxRenderSeconds of CPU
    (each may hold one worker that long),
  - and the case's own check (below) holds.
Hostile files come from hostile_*.py OUTDIR generators beside this script.

Usage: attacks.py BIN WORKDIR [CASE...]     (attacks.sh calls it; CASE names filter)
Prints a Markdown table; exit status 1 when a case breaks a bound.
"""
import http.client, json, os, signal, socket, struct, subprocess, sys, threading, time, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULTS = {"cache": 256 * MIB, "decode": 512 * MIB, "pending": 256 * MIB, "render": 10}


def png_1x1():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x80\x40\x20\xff")) + chunk(b"IEND", b""))


def normal_jpeg():
    """A 1024x768 RGB gradient through cjpeg -quality 85: the 'normal' source."""
    ppm = b"P6 1024 768 255\n" + bytes((x // 4 + y // 3) % 256 for y in range(768) for x in range(1024) for _ in (0, 1, 2))
    return subprocess.run(["cjpeg", "-quality", "85"], input=ppm, capture_output=True, check=True).stdout


class Origin(ThreadingHTTPServer):
    """Files from a directory; /stall/N announces 50 MB and stalls before the
    last byte (until the client goes, at most 30 s); /missing/... is 404."""
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass   # a client that goes early (a killed render, a refusal) is no news

    def __init__(self, directory):
        self.directory = directory
        super().__init__(("127.0.0.1", 0), OriginHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class OriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.startswith("/stall/"):
            size = 50_000_000
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = bytes(1 << 20)
            try:
                sent = 0
                while sent < size - 1:
                    n = min(len(block), size - 1 - sent)
                    self.wfile.write(block[:n])
                    sent += n
                self.wfile.flush()
                self.connection.settimeout(30)
                self.connection.recv(1)   # until the client gives up
            except OSError:
                pass
            return
        name = os.path.basename(path)
        full = os.path.join(self.server.directory, name)
        if path.startswith("/missing/") or not os.path.isfile(full):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = open(full, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def children(pid):
    """{pid: (process group, RSS bytes, CPU seconds)} of the live children of pid (its
    workers), from /proc (this kernel has no /proc/PID/task/TID/children)."""
    found, tick = {}, os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            found[int(entry)] = (int(fields[2]), int(fields[21]) * os.sysconf("SC_PAGE_SIZE"),
                                 (int(fields[11]) + int(fields[12])) / tick)
    return found


def usage(pid):
    """(RSS bytes, CPU seconds, the daemon's own RSS bytes) of the daemon and its workers
    together: the daemon's VmRSS and CPU (its reaped workers' CPU included), plus each
    live worker's."""
    tick = os.sysconf("SC_CLK_TCK")
    own = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")) * 1024
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    rss, cpu = own, sum(int(f) for f in fields[11:15]) / tick
    for _, worker_rss, worker_cpu in children(pid).values():
        rss, cpu = rss + worker_rss, cpu + worker_cpu
    return rss, cpu, own


class Daemon:
    def __init__(self, binary, work, name, extra=None):
        self.binary, self.work, self.name = binary, work, name
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = {"listen": f"127.0.0.1:{self.port}", "workers": 2,
                  "diskStore": {"path": f"{work}/store-{name}"},
                  "origin": {"allowPrivateNetworks": True},
                  "log": {"accessLog": False, "level": "warning"}}
        for key, value in (extra or {}).items():
            if isinstance(value, dict):
                config.setdefault(key, {}).update(value)
            else:
                config[key] = value
        self.config = config
        self.config_path = f"{work}/{name}.json"
        json.dump(config, open(self.config_path, "w"))
        self.proc = subprocess.Popen([binary, "--config", self.config_path],
                                     stdout=subprocess.DEVNULL, stderr=open(f"{work}/{name}.log", "w"))
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"{name}: nothing listens on {self.port}")
        self.samples, self.stop_sampling = [], threading.Event()
        self.sampler = threading.Thread(target=self.sample, daemon=True)
        self.sampler.start()

    def sample(self):
        for _ in range(4 * 600):   # at most 10 min
            if self.stop_sampling.is_set():
                return
            try:
                self.samples.append(usage(self.proc.pid))
            except (OSError, StopIteration):
                return
            time.sleep(0.25)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.stop_sampling.set()
        self.sampler.join()
        if self.alive():
            self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def bound(self):
        limits = self.config.get("limits", {})
        http = self.config.get("http", {})
        return (self.config.get("memoryCacheBytes", DEFAULTS["cache"])
                + limits.get("maxDecodeMemoryBytes", DEFAULTS["decode"])
                + 2 * http.get("maxPendingResponseBytes", DEFAULTS["pending"]) + 64 * MIB)

    def get(self, query, timeout=60):
        """(status, seconds, body length) of one GET on a new connection."""
        start = time.monotonic()
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            c.request("GET", query)
            r = c.getresponse()
            n = len(r.read())
            c.close()
            return r.status, time.monotonic() - start, n
        except OSError:
            return 0, time.monotonic() - start, 0

    def stats(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request("GET", "/stats")
        return json.loads(c.getresponse().read())


def quote(url):
    from urllib.parse import quote as q
    return q(url, safe="")


class Beside(threading.Thread):
    """A normal 256-px thumbnail of a new source every second; the slowest answer."""
    def __init__(self, daemon, origin):
        super().__init__(daemon=True)
        self.d, self.origin, self.done, self.times, self.bad = daemon, origin, threading.Event(), [], 0

    def run(self):
        for i in range(600):
            if self.done.wait(1):
                return
            # Another host name than the attack's (localhost, not 127.0.0.1): an honest
            # site beside the attacker's, which gets its own share of the downloads.
            normal = f"{self.origin.base.replace('127.0.0.1', 'localhost')}/normal.jpg?beside={i}"
            status, seconds, _ = self.d.get(f"/thumbnail?url={quote(normal)}&w=256", 10)
            self.times.append(seconds)
            self.bad += status != 200
            if status != 200:
                print(f"beside: {status} after {seconds:.2f} s", file=sys.stderr)

    def finish(self):
        self.done.set()
        self.join()
        return max(self.times, default=0.0), self.bad


def in_parallel(jobs, threads):
    """Runs the callables on `threads` threads; their results in order."""
    results, lock, it = [None] * len(jobs), threading.Lock(), iter(range(len(jobs)))
    def worker():
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                return
            results[i] = jobs[i]()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool: t.start()
    for t in pool: t.join()
    return results


# Cases: each takes (daemon, origin, work) and returns (CPU-seconds bound or None, ok, note).

def hostile_file(name):
    def case(d, origin, work):
        url = f"{origin.base}/{name}"
        jobs = [lambda i=i: d.get(f"/thumbnail?url={quote(url + f'?n={i}')}&w=256", 60) for i in range(4)]
        answers = in_parallel(jobs, 4)
        slowest = max(a[1] for a in answers)
        codes = sorted({a[0] for a in answers})
        # Each request may hold one worker for at most maxRenderSeconds.
        return len(jobs) * DEFAULTS["render"], slowest <= DEFAULTS["render"] + 1, f"codes {codes}, slowest {slowest:.1f} s"
    return case


def churn(d, origin, work):
    """wrk with Connection: close (a new connection per request) for 20 s,
    SIGHUP (reload) every 0.25 s; the daemon must still be there."""
    wrk = subprocess.Popen(["wrk", "-t2", "-c32", "-d20s", "-H", "Connection: close",
                            f"http://127.0.0.1:{d.port}/healthz"], stdout=subprocess.PIPE, text=True)
    for _ in range(80):
        if wrk.poll() is not None or not d.alive():
            break
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.25)
    out, _ = wrk.communicate(timeout=60)
    rate = next((l.split()[1] for l in out.splitlines() if l.startswith("Requests/sec")), "?")
    alive = d.alive() and d.get("/healthz", 5)[0] == 200
    return None, alive, f"{rate} closes/s, {'alive' if alive else 'DEAD'}"


def stalled_downloads(d, origin, work):
    """64 downloads (origin.maxConcurrentFetches) of 50 MB announced, all but the last byte sent."""
    jobs = [lambda i=i: d.get(f"/thumbnail?url={quote(f'{origin.base}/stall/{i}')}&w=256", 60) for i in range(64)]
    answers = in_parallel(jobs, 64)
    slowest = max(a[1] for a in answers)
    codes = sorted({a[0] for a in answers})
    return None, slowest <= DEFAULTS["render"] + 1, f"codes {codes}, slowest {slowest:.1f} s"


def cache_spellings(d, origin, work):
    """A 1x1 PNG under a ~2 KB URL as rgba at up to 40 000 sizes (60 s at most):
    the RSS it adds must be what /stats counts for the memory cache, within 64 MiB."""
    base_rss = d.samples[-1][2] if d.samples else 0   # the daemon's own: workers come and go
    url = quote(f"{origin.base}/one.png?pad={'p' * 2000}")
    deadline = time.monotonic() + 60
    sizes = [(w, h) for w in range(1, 201) for h in range(1, 201)]
    count = [0]
    def worker(part):
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
        for w, h in part:
            if time.monotonic() > deadline:
                return
            c.request("GET", f"/thumbnail?url={url}&w={w}&h={h}&fit=fill&format=rgba")
            c.getresponse().read()
            count[0] += 1
    in_parallel([lambda p=sizes[i::4]: worker(p) for i in range(4)], 4)
    time.sleep(1)
    cache = d.stats()["memoryCache"]["bytes"]
    grown = d.samples[-1][2] - base_rss
    ok = grown <= cache + 64 * MIB
    return None, ok, f"{count[0]} sizes, RSS +{grown / MIB:.0f} MiB, /stats cache {cache / MIB:.1f} MiB"


def failing_urls(d, origin, work):
    """Up to 60 000 distinct ~2 KB source URLs that 404 (60 s at most), remembered
    for an hour: the negative cache must stay bounded by bytes."""
    base_rss = d.samples[-1][2] if d.samples else 0   # the daemon's own: workers come and go
    deadline = time.monotonic() + 60
    count = [0]
    def worker(k):
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
        for i in range(k, 60000, 4):
            if time.monotonic() > deadline:
                return
            c.request("GET", f"/thumbnail?url={quote(f'{origin.base}/missing/{i}?pad=' + 'p' * 2000)}&w=64")
            c.getresponse().read()
            count[0] += 1
    in_parallel([lambda k=k: worker(k) for k in range(4)], 4)
    grown = d.samples[-1][2] - base_rss
    return None, grown <= 64 * MIB, f"{count[0]} failing URLs, RSS +{grown / MIB:.0f} MiB"


def honest_reader(d, origin, work):
    """One client starts reading a 16 MiB rgba answer steadily at ~2 MiB/s; then 8
    connections read another 16 MiB answer (a memory hit after the first) as fast
    as they can; http.maxPendingResponseBytes 32 MiB. The steady reader, whose
    answer was under way first, must get all of it: room is made by closing
    stalled connections, never one that is reading."""
    stop = threading.Event()
    def fast(k):
        for i in range(200):
            if stop.is_set():
                return
            d.get(f"/thumbnail?url={quote(f'{origin.base}/normal.jpg?fast')}"
                  "&w=2048&h=2048&fit=fill&enlarge=1&format=rgba", 30)
    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall((f"GET /thumbnail?url={quote(origin.base + '/normal.jpg?steady')}&w=2048&h=2048&fit=fill"
               "&enlarge=1&format=rgba HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").encode())
    fasts = [threading.Thread(target=fast, args=(k,)) for k in range(8)]
    got, start, started = 0, time.monotonic(), False
    try:
        while time.monotonic() - start < 30:
            chunk = s.recv(64 * 1024)
            if not chunk:
                break
            got += len(chunk)
            if got >= MIB and not started:
                started = True
                for t in fasts: t.start()
            time.sleep(len(chunk) / (2 * MIB))
    except OSError:
        pass
    s.close()
    stop.set()
    for t in fasts[:8 if started else 0]: t.join()
    whole = got >= 2048 * 2048 * 4
    return None, whole, f"steady reader got {got / MIB:.1f} MiB of 16"


CASES = [
    ("churn", churn, {}),
    ("stalled-downloads", stalled_downloads, {}),
    ("cache-spellings", cache_spellings, {}),
    ("failing-urls", failing_urls, {"origin": {"negativeCacheSeconds": 3600}}),
    ("honest-reader", honest_reader, {"http": {"maxPendingResponseBytes": 32 * MIB}}),
]


def main():
    binary, work, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
    files = f"{work}/hostile"
    os.makedirs(files, exist_ok=True)
    open(f"{files}/normal.jpg", "wb").write(normal_jpeg())
    open(f"{files}/one.png", "wb").write(png_1x1())
    cases = list(CASES)
    for generator in sorted(os.listdir(HERE)):
        if generator.startswith("hostile_") and generator.endswith(".py"):
            made = f"{work}/{generator[:-3]}"
            os.makedirs(made, exist_ok=True)
            subprocess.run([sys.executable, f"{HERE}/{generator}", made], check=True, stdout=subprocess.DEVNULL)
            for name in sorted(os.listdir(made)):
                os.replace(f"{made}/{name}", f"{files}/{name}")
                cases.append((name, hostile_file(name), {}))
    # Issue 34's cases (attacks_boundaries.py), which take the Beside too.
    from attacks_boundaries import CASES as BOUNDARY_CASES, make_inputs
    if not wanted or any(name in wanted for name, _, _ in BOUNDARY_CASES):
        make_inputs(binary, files)
    cases += BOUNDARY_CASES
    takes_beside = {case for _, case, _ in BOUNDARY_CASES}
    origin = Origin(files)
    print("| attack | check | CPU s | peak RSS MiB | bound MiB | slowest normal s | holds |")
    print("|---|---|---|---|---|---|---|")
    broken = 0
    for name, case, extra in cases:
        if wanted and name not in wanted:
            continue
        print(f"attack: {name}", file=sys.stderr)
        prepare, cleanup = getattr(case, "prepare", None), getattr(case, "cleanup", None)
        try:
            d = Daemon(binary, work, name, {**extra, **(prepare(work) if prepare else {})})
        except Exception:
            if cleanup: cleanup(work)
            raise
        time.sleep(0.5)
        beside = Beside(d, origin)
        if not getattr(case, "starts_beside", False):
            beside.start()
        cpu0 = d.samples[-1][1] if d.samples else 0
        try:
            if case in takes_beside:
                cpu_bound, ok, note = case(d, origin, work, beside)
            else:
                cpu_bound, ok, note = case(d, origin, work)
            slowest, bad = beside.finish() if beside.is_alive() or beside.times else (0.0, 0)
            d.stop()
        finally:   # a case that raised leaves no daemon behind either
            if d.alive():
                d.stop()
            if cleanup: cleanup(work)
        peak = max((s[0] for s in d.samples), default=0)
        cpu = (d.samples[-1][1] if d.samples else 0) - cpu0
        if ok is None:   # skipped, its note says why
            print(f"| {name} | {note} | | | | | skipped |", flush=True)
            continue
        holds = ok and peak <= d.bound() and slowest <= 1.0 and bad == 0 and (cpu_bound is None or cpu <= cpu_bound)
        broken += not holds
        print(f"| {name} | {note} | {cpu:.1f}{f' (≤ {cpu_bound})' if cpu_bound else ''} | {peak / MIB:.0f} | {d.bound() // MIB} | "
              f"{slowest:.2f}{f' ({bad} failed)' if bad else ''} | {'yes' if holds else 'NO'} |", flush=True)
    origin.shutdown()
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
