#!/usr/bin/env python3
"""Issue 34's memory measurement against a release thumbd, everything on 127.0.0.1.

Two parts, each against a fresh daemon and a loopback origin serving make-inputs.sh's
--formats photos (12 MP: PNG RGB and RGBA, progressive and baseline JPEG, WebP, AVIF,
HEIC; a distinct source per request through ?n=):

1. One render at a time (workers 1, default limits): for each format and width, the
   render queue's estimate (the most /stats render.memoryInUse showed, polled every
   5 ms: the cost the render was admitted at) against the measured peak of the job —
   the worker's VmHWM above its RSS before the job (its high-water mark is reset
   through /proc/PID/clear_refs, so root only; the worker has been idle 1.5 s, so it
   gave its freed heap back) — and the daemon's VmHWM above its RSS before (the
   result it reads from the worker's memfds).
2. The stress: 8 clients, each sending its next distinct heavy render as soon as
   the last answered (the formats in turn at widths 3000, 1500, 256 and 64), for
   STRESS seconds, against workers WORKERS, memoryCacheBytes 64 MiB,
   maxDecodeMemoryBytes 384 MiB, http.maxPendingResponseBytes 64 MiB (attacks.sh's
   budgets). Every 0.2 s the daemon's and its workers' VmRSS are summed (also their
   RssAnon + RssShmem, and their Pss, which counts the binary's pages they share
   once). The stress holds when the summed VmRSS stays within memoryCacheBytes +
   maxDecodeMemoryBytes + 2 x maxPendingResponseBytes + 64 MiB and no answer is a 5xx.

Usage: memory_bench.py BIN INPUTS WORKDIR   (memory-bench.sh calls it)
Environment: STRESS (seconds, default 60), WORKERS (default 4, the attack's),
PARTS ("single,stress" by default).
Prints Markdown tables; exit status 1 when the stress breaks its bound.
"""
import json, os, socket, subprocess, sys, threading, time, urllib.parse, urllib.request
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

MIB = 1 << 20
BIN, INPUTS, WORK = sys.argv[1:4]
STRESS = int(os.environ.get("STRESS", "60"))
WORKERS = int(os.environ.get("WORKERS", "4"))
PARTS = os.environ.get("PARTS", "single,stress").split(",")
FILES = ["png-12mp-rgb.png", "png-12mp-rgba.png", "jpeg-12mp-progressive.jpg", "jpeg-12mp-baseline.jpg",
         "webp-12mp.webp", "avif-12mp.avif", "heic-12mp.heic"]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def origin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=INPUTS))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, name, config):
        self.port = free_port()
        config = dict(config, listen=f"127.0.0.1:{self.port}",
                      diskStore={"path": f"{WORK}/store-{name}", "maxBytes": 1024 * MIB},
                      origin={"allowPrivateNetworks": True}, log={"accessLog": False, "level": "warning"})
        path = f"{WORK}/{name}.json"
        with open(path, "w") as f:
            json.dump(config, f)
        self.log = open(f"{WORK}/{name}.log", "w")
        self.process = subprocess.Popen([BIN, "--config", path], stdout=self.log, stderr=self.log)
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"the daemon did not listen on {self.port}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def get(self, query, timeout=60):
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/thumbnail?{query}", timeout=timeout) as r:
                r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        except OSError:
            status = 0
        return status, time.monotonic() - started

    def stats(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=2) as r:
            return json.load(r)

    def workers(self):
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                found.append(int(entry))
        return found


def status(pid):
    """VmRSS, VmHWM, RssAnon, RssShmem in bytes, or None once the process has gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssShmem"):
                    values[key] = int(rest.split()[0]) * 1024
    except OSError:
        return None
    return values


def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def mib(n):
    return f"{n / MIB:.0f}"


def single(base):
    daemon = Daemon("single", {"workers": 1})
    try:
        assert daemon.get(f"url={urllib.parse.quote(base + '/thumb-20k.jpg', safe='')}&w=16")[0] == 200
        rows, n = [], 0
        for name in FILES:
            for width in (3000, 1500, 256):
                n += 1
                time.sleep(1.5)   # the worker trims its freed heap after 1 s idle
                (worker,) = daemon.workers()
                before_w, before_d = status(worker)["VmRSS"], status(daemon.process.pid)["VmRSS"]
                reset_peak(worker)
                reset_peak(daemon.process.pid)
                estimate, done = [0], threading.Event()

                def poll():
                    while not done.is_set():
                        try:
                            estimate[0] = max(estimate[0], daemon.stats()["render"]["memoryInUse"])
                        except OSError:
                            pass
                        time.sleep(0.005)
                poller = threading.Thread(target=poll)
                poller.start()
                url = urllib.parse.quote(f"{base}/{name}?n={n}", safe="")
                code, seconds = daemon.get(f"url={url}&w={width}")
                done.set()
                poller.join()
                peak_w = status(worker)["VmHWM"] - before_w if status(worker) else -1
                peak_d = status(daemon.process.pid)["VmHWM"] - before_d
                rows.append((name, width, code, seconds, estimate[0], peak_w, peak_d, before_w))
        print("One render at a time (workers 1, default limits); MiB:\n")
        print("| source | w | answer | s | estimate | worker peak above its idle RSS | daemon peak above its RSS | worker RSS before |")
        print("|---|---|---|---|---|---|---|---|")
        for name, width, code, seconds, est, pw, pd, bw in rows:
            print(f"| {name} | {width} | {code} | {seconds:.2f} | {mib(est)} | {mib(pw)} | {mib(pd)} | {mib(bw)} |")
        print()
    finally:
        daemon.stop()


def stress(base):
    cache, decode, pending = 64 * MIB, 384 * MIB, 64 * MIB
    bound = cache + decode + 2 * pending + 64 * MIB
    daemon = Daemon("stress", {"workers": WORKERS, "memoryCacheBytes": cache,
                               "limits": {"maxDecodeMemoryBytes": decode},
                               "http": {"maxPendingResponseBytes": pending, "sendTimeoutSeconds": 5}})
    peaks = {"rss": 0, "anon": 0, "pss": 0, "processes": 0}
    at_peak = {}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            pids = [daemon.process.pid] + daemon.workers()
            figures = {pid: status(pid) for pid in pids}
            figures = {pid: f for pid, f in figures.items() if f}
            rss = sum(f["VmRSS"] for f in figures.values())
            anon = sum(f["RssAnon"] + f["RssShmem"] for f in figures.values())
            total_pss = sum(pss(pid) for pid in figures)
            if rss > peaks["rss"]:
                at_peak.clear()
                at_peak.update({"daemon": figures.get(daemon.process.pid, {}).get("VmRSS", 0),
                                "workers": [f["VmRSS"] for pid, f in figures.items() if pid != daemon.process.pid]})
            peaks["rss"] = max(peaks["rss"], rss)
            peaks["anon"] = max(peaks["anon"], anon)
            peaks["pss"] = max(peaks["pss"], total_pss)
            peaks["processes"] = max(peaks["processes"], len(figures))
            time.sleep(0.2)

    counter, lock, codes, slowest = [0], threading.Lock(), {}, [0.0]
    widths = (3000, 1500, 256, 64)
    end = time.monotonic() + STRESS

    def client():
        while time.monotonic() < end:
            with lock:
                counter[0] += 1
                n = counter[0]
            name = FILES[n % len(FILES)]
            width = widths[(n // len(FILES)) % len(widths)]
            url = urllib.parse.quote(f"{base}/{name}?stress={n}", safe="")
            code, seconds = daemon.get(f"url={url}&w={width}", timeout=40)
            with lock:
                codes[code] = codes.get(code, 0) + 1
                slowest[0] = max(slowest[0], seconds)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        clients = [threading.Thread(target=client) for _ in range(8)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        time.sleep(2)
    finally:
        stop.set()
        sampler.join()
        daemon.stop()
    answers = " ".join(f"{k}x{v}" for k, v in sorted(codes.items()))
    ok = peaks["rss"] <= bound and not any(k >= 500 or k == 0 for k in codes)
    print(f"Stress: 8 clients, {STRESS} s, workers {WORKERS}; bound memoryCacheBytes {mib(cache)} + "
          f"maxDecodeMemoryBytes {mib(decode)} + 2 x maxPendingResponseBytes {mib(pending)} + 64 = {mib(bound)} MiB\n")
    print("| renders | answers | slowest s | peak sum VmRSS MiB | at that peak: daemon, workers | "
          "peak sum RssAnon+RssShmem | peak sum Pss | processes | within bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    workers = "+".join(mib(w) for w in at_peak.get("workers", []))
    print(f"| {sum(codes.values())} | {answers} | {slowest[0]:.1f} | {mib(peaks['rss'])} | "
          f"{mib(at_peak.get('daemon', 0))}, {workers} | {mib(peaks['anon'])} | {mib(peaks['pss'])} | "
          f"{peaks['processes']} | {'yes' if ok else 'NO'} |")
    return ok


base = origin()
if "single" in PARTS:
    single(base)
ok = stress(base) if "stress" in PARTS else True
sys.exit(0 if ok else 1)
