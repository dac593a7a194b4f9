#!/usr/bin/env python3
"""Cluster test (SPEC §11, issue 12), all on 127.0.0.1 with real processes:
three thumbd instances, the shipped Config/nginx-thumbd.conf in a real nginx
(ports substituted), and a python http.server origin over 300 small JPEGs.

  1. 300 sources x 3 variants through nginx: every source fetched from the
     origin once in all, each instance holding 20-46 % of them, no source in
     two stores.
  2. SIGKILL one instance in the middle of a second pass: every request still
     answered 200 (nginx retries the next instance on the ring), and afterwards
     exactly that instance's sources were fetched a second time, nothing else.
  3. Restart it on the same cache directory: its sources come back to it and
     are served from its disk store without touching the origin.
  4. One variant asked of two instances directly: the same ETag, 304 across.

Usage: Tests/Cluster/cluster-test.py [THUMBD_BINARY]      (default: the debug build)
Prints "N passed, M failed" and exits 1 when anything failed.
"""
import collections
import concurrent.futures
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = 300
INSTANCES = 3
VARIANTS = ["w=64", "w=40&h=40&fit=cover", "w=48&format=png"]
CLIENTS = 8              # concurrent client connections to nginx
REQUEST_TIMEOUT = 10     # seconds, per request
WHOLE_RUN_LIMIT = 150    # seconds: SIGALRM stops a run that hangs anyway


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print(f"ok    {name}")
        else:
            self.failed += 1
            print(f"FAIL  {name}  {detail}")
        sys.stdout.flush()
        return ok


def free_ports(n):
    """n distinct ports the kernel picked from its ephemeral range; held open
    together so they differ, released just before the servers bind them."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def request(port, target, headers=None, method="GET"):
    """One request on a fresh connection: (status, headers with lower-case names, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        conn.request(method, target, headers=headers or {})
        r = conn.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        conn.close()


class Client:
    """CLIENTS keep-alive connections to nginx, one per worker thread; a
    request that fails at the socket level counts as status 0, never retried
    here (retrying is nginx's job under test)."""

    def __init__(self, port):
        self.port = port
        self.local = threading.local()

    def get(self, target, headers=None):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        try:
            conn.request("GET", target, headers=headers or {})
            r = conn.getresponse()
            r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            self.local.conn = None
            return 0, {"error": repr(e)}

    def run(self, targets, after=None, on_progress=None):
        """GETs every target with CLIENTS threads; on_progress(done) is called
        from this thread as answers arrive. Returns [(target, status, headers)]."""
        results = []
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            futures = {pool.submit(self.get, t): t for t in targets}
            for f in concurrent.futures.as_completed(futures, timeout=REQUEST_TIMEOUT * len(targets) / CLIENTS + 30):
                status, headers = f.result()
                results.append((futures[f], status, headers))
                if on_progress:
                    on_progress(len(results))
        return results


class Cluster:
    def __init__(self, binary, work):
        self.binary, self.work = binary, work
        ports = free_ports(INSTANCES + 2)
        self.origin_port, self.nginx_port, self.ports = ports[0], ports[1], ports[2:]
        self.instances = [None] * INSTANCES
        self.origin = self.nginx = None

    # -- processes --------------------------------------------------------

    def start_origin(self):
        images = os.path.join(self.work, "origin")
        os.mkdir(images)
        base = open(os.path.join(ROOT, "Tests/ThumbCodecTests/Fixtures/testorig.jpg"), "rb").read()
        assert base[:2] == b"\xff\xd8"
        for i in range(SOURCES):
            # A COM segment right after SOI makes every file's bytes (and so its
            # digest and ETags) distinct while the image stays the same.
            text = f"cluster source {i}".encode()
            data = base[:2] + b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text + base[2:]
            with open(os.path.join(images, self.name(i)), "wb") as f:
                f.write(data)
        self.origin_log = os.path.join(self.work, "origin.log")
        self.origin = subprocess.Popen(
            [sys.executable, "-u", "-m", "http.server", str(self.origin_port), "--bind", "127.0.0.1",
             "--directory", images],
            stdout=subprocess.DEVNULL, stderr=open(self.origin_log, "w"))
        self.wait_ready(self.origin_port, "/", "origin")  # the listing: no source counted

    def instance_config(self, k):
        path = os.path.join(self.work, f"i{k}.json")
        # diskStore.path stays null: like systemd/thumbd@.service, the store is
        # $CACHE_DIRECTORY/originals, set per instance below.
        json.dump({"listen": f"127.0.0.1:{self.ports[k]}", "origin": {"allowPrivateNetworks": True},
                   "log": {"accessLog": False}}, open(path, "w"))
        return path

    def cache_directory(self, k):
        return os.path.join(self.work, "cache", f"i{k}")

    def start_instance(self, k):
        env = {key: v for key, v in os.environ.items()
               if key not in ("NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "WATCHDOG_USEC", "JOURNAL_STREAM")}
        env["HOME"] = self.work
        env["CACHE_DIRECTORY"] = self.cache_directory(k)
        os.makedirs(env["CACHE_DIRECTORY"], exist_ok=True)
        self.instances[k] = subprocess.Popen(
            [self.binary, "--config", self.instance_config(k)], env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.work, f"i{k}.log"), "a"))
        self.wait_ready(self.ports[k], "/healthz", f"instance {k}")

    def start_nginx(self):
        shipped = open(os.path.join(ROOT, "Config/nginx-thumbd.conf")).read()
        conf = shipped
        for k in range(INSTANCES):
            old = f"server 127.0.0.1:{8081 + k} "
            if conf.count(old) != 1:
                raise RuntimeError(f"Config/nginx-thumbd.conf no longer has one '{old}'")
            conf = conf.replace(old, f"server 127.0.0.1:{self.ports[k]} ")
        if conf.count("listen 80;") != 1:
            raise RuntimeError("Config/nginx-thumbd.conf no longer has one 'listen 80;'")
        conf = conf.replace("listen 80;", f"listen 127.0.0.1:{self.nginx_port};")
        open(os.path.join(self.work, "thumbd.conf"), "w").write(conf)
        w = self.work
        open(os.path.join(w, "nginx.conf"), "w").write(f"""
worker_processes 1;
daemon off;
pid {w}/nginx.pid;
error_log {w}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log {w}/nginx-access.log;
  client_body_temp_path {w}/tmp; proxy_temp_path {w}/tmp; fastcgi_temp_path {w}/tmp;
  uwsgi_temp_path {w}/tmp; scgi_temp_path {w}/tmp;
  include {w}/thumbd.conf;
}}
""")
        # Own process group: the master's worker goes with it on the way out.
        self.nginx = subprocess.Popen(["nginx", "-c", os.path.join(w, "nginx.conf")],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        self.wait_ready(self.nginx_port, "/healthz", "nginx")

    def wait_ready(self, port, path, what, limit=10):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                if request(port, path)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{what} on port {port} not answering {path} within {limit} s")

    def kill_instance(self, k):
        self.instances[k].send_signal(signal.SIGKILL)
        self.instances[k].wait(5)

    def stop_all(self):
        for p in [self.origin] + self.instances:
            if p and p.poll() is None:
                p.kill()
                p.wait(5)
        if self.nginx and self.nginx.poll() is None:
            self.nginx.terminate()
            try:
                self.nginx.wait(3)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.nginx.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.nginx.wait(5)

    # -- what the test reads ----------------------------------------------

    @staticmethod
    def name(i):
        return f"img-{i:03d}.jpg"

    def source(self, i):
        return f"http://127.0.0.1:{self.origin_port}/{self.name(i)}"

    def target(self, i, variant):
        return f"/thumbnail?url={urllib.parse.quote(self.source(i), safe='')}&{variant}"

    def stats(self, k):
        status, _, body = request(self.ports[k], "/stats")
        assert status == 200, f"/stats of instance {k}: {status}"
        return json.loads(body)

    def origin_fetches(self):
        """Counter of source names the origin served, from its access log."""
        counts = collections.Counter()
        for line in open(self.origin_log):
            if '"GET /img-' in line:
                counts[line.split('"GET /', 1)[1].split(" ", 1)[0]] += 1
        return counts

    def stored_sources(self, k):
        """Sources whose original is in instance k's disk store: the store names
        each file by the SHA-256 of its source URL (DiskStore.name(for:))."""
        by_digest = {hashlib.sha256(self.source(i).encode()).hexdigest(): i for i in range(SOURCES)}
        found = set()
        for _, _, files in os.walk(os.path.join(self.cache_directory(k), "originals")):
            found.update(by_digest[f] for f in files if f in by_digest)
        return found


def thumbnail_requests(stats):
    return stats["memoryCache"]["hits"] + stats["memoryCache"]["misses"]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True,
                       capture_output=True, text=True).stdout.strip(), "thumbd")
    work = tempfile.mkdtemp(prefix="thumbd-cluster-")
    os.chmod(work, 0o755)  # nginx workers run as nobody when the test runs as root
    os.mkdir(os.path.join(work, "tmp"))
    cluster = Cluster(binary, work)
    checks = Checks()
    started = time.monotonic()

    def stop(signum, _frame):
        raise SystemExit(f"stopped by signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.alarm(WHOLE_RUN_LIMIT)
    try:
        cluster.start_origin()
        for k in range(INSTANCES):
            cluster.start_instance(k)
        cluster.start_nginx()
        client = Client(cluster.nginx_port)
        run_phases(cluster, client, checks)
    except BaseException as e:  # a crash or timeout is a failure, never a pass
        checks.check(False, "the run completed", repr(e))
    finally:
        signal.alarm(0)
        cluster.stop_all()
        if checks.failed:
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    tail = open(os.path.join(work, log), errors="replace").read()[-1500:]
                    print(f"--- {log} (tail)\n{tail}")
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ncluster test: {checks.passed} passed, {checks.failed} failed ({time.monotonic() - started:.1f} s)")
    sys.exit(1 if checks.failed else 0)


def run_phases(cluster, client, checks):
    rng = random.Random(12)
    everything = set(range(SOURCES))

    # 1. Every variant of every source through nginx, in a shuffled order.
    targets = [cluster.target(i, v) for i in range(SOURCES) for v in VARIANTS]
    rng.shuffle(targets)
    results = client.run(targets)
    bad = [(t, s, h) for t, s, h in results if s != 200]
    checks.check(not bad, f"pass 1: all {len(targets)} answered 200 through nginx", bad[:3])
    stats = [cluster.stats(k) for k in range(INSTANCES)]
    fetches = [s["origin"]["fetches"] for s in stats]
    checks.check(sum(fetches) == SOURCES, f"pass 1: /stats origin.fetches sum to {SOURCES}", fetches)
    seen = cluster.origin_fetches()
    checks.check(set(seen) == {cluster.name(i) for i in everything} and set(seen.values()) == {1},
                 "pass 1: the origin log shows each source exactly once",
                 f"{len(seen)} paths, counts {collections.Counter(seen.values())}")
    entries = [s["diskStore"]["entries"] for s in stats]
    checks.check(all(0.20 * SOURCES <= e <= 0.46 * SOURCES for e in entries),
                 "pass 1: each instance's disk store holds 20-46 % of the sources", entries)
    owned = [cluster.stored_sources(k) for k in range(INSTANCES)]
    checks.check(set().union(*owned) == everything and sum(map(len, owned)) == SOURCES
                 and [len(o) for o in owned] == entries,
                 "pass 1: every source's original is in exactly one instance's store",
                 [len(o) for o in owned])

    # 2. A second pass (a new variant, then a known one); the victim is killed
    # with SIGKILL once a third of the first part has been answered.
    victim = 1
    lost = owned[victim]
    killed = threading.Event()

    def kill_at_third(done):
        if done >= SOURCES // 3 and not killed.is_set():
            killed.set()
            cluster.kill_instance(victim)
    results = client.run([cluster.target(i, "w=56") for i in range(SOURCES)], on_progress=kill_at_third)
    results += client.run([cluster.target(i, "w=64") for i in range(SOURCES)])
    bad = [(t, s, h) for t, s, h in results if s != 200]
    checks.check(killed.is_set() and not bad,
                 f"pass 2: instance {victim} SIGKILLed mid-run, all {len(results)} still answered 200", bad[:3])
    seen = cluster.origin_fetches()
    twice = {int(n[4:7]) for n, c in seen.items() if c == 2}
    checks.check(twice == lost and set(seen.values()) <= {1, 2} and len(seen) == SOURCES,
                 f"pass 2: exactly the killed instance's {len(lost)} sources were fetched again",
                 f"{len(twice)} fetched twice, {len(twice & lost)} of them the victim's, counts "
                 f"{collections.Counter(seen.values())}")
    survivors = [k for k in range(INSTANCES) if k != victim]
    fetches = [cluster.stats(k)["origin"]["fetches"] for k in survivors]
    checks.check(sum(fetches) == SOURCES, "pass 2: survivors' origin.fetches = their own + the victim's sources",
                 fetches)

    # 3. Restart the victim on its cache directory. nginx retries it after
    # fail_timeout; probe one of its sources (bounded) until it answers again.
    cluster.start_instance(victim)
    probe = cluster.target(min(lost), "w=64")
    deadline = time.monotonic() + 15
    returned = False
    while time.monotonic() < deadline and not returned:
        client.get(probe)
        returned = thumbnail_requests(cluster.stats(victim)) > 0
        if not returned:
            time.sleep(0.5)
    checks.check(returned, f"pass 3: nginx sends the restarted instance its sources again within 15 s")
    before = [thumbnail_requests(cluster.stats(k)) for k in range(INSTANCES)]
    results = client.run([cluster.target(i, "w=64") for i in sorted(lost)])
    after = [cluster.stats(k) for k in range(INSTANCES)]
    bad = [(t, s, h) for t, s, h in results if s != 200 or h.get("x-cache") == "origin"]
    checks.check(not bad, f"pass 3: its {len(lost)} sources answered 200, none from the origin", bad[:3])
    gained = [thumbnail_requests(after[k]) - before[k] for k in range(INSTANCES)]
    checks.check(gained[victim] == len(lost) and all(gained[k] == 0 for k in survivors),
                 "pass 3: all of them reached the restarted instance, none the others", gained)
    checks.check(after[victim]["origin"]["fetches"] == 0 and after[victim]["diskStore"]["hits"] >= len(lost),
                 "pass 3: served from its surviving disk store (0 origin fetches)",
                 {"origin": after[victim]["origin"], "diskStore": after[victim]["diskStore"]})
    checks.check(cluster.origin_fetches() == seen, "pass 3: the origin saw no new request")

    # 4. One variant of one source asked of its owner and of another instance.
    owner = 0
    other = 2
    i = min(owned[owner])
    s1, h1, _ = request(cluster.ports[owner], cluster.target(i, "w=64"))
    s2, h2, _ = request(cluster.ports[other], cluster.target(i, "w=64"))
    checks.check(s1 == s2 == 200 and h1.get("etag") and h1.get("etag") == h2.get("etag"),
                 "ETag: one variant has the same ETag on two instances", (s1, s2, h1.get("etag"), h2.get("etag")))
    s3, h3, body = request(cluster.ports[other], cluster.target(i, "w=64"), {"If-None-Match": h1.get("etag", "")})
    checks.check(s3 == 304 and not body, "ETag: the other instance answers the owner's ETag with 304", s3)
    j = min(owned[other])
    s4, h4, _ = request(cluster.ports[other], cluster.target(j, "w=64"))
    checks.check(s4 == 200 and h4.get("etag") != h1.get("etag"), "ETag: another source has another ETag")
    # Accept through nginx: the answer must match the owner's own answer for
    # that Accept, and differ from its answer without one (so a dropped header
    # would show), whatever the negotiated format is on this build.
    auto = cluster.target(i, "w=64&format=auto")
    webp = {"Accept": "image/webp"}

    def summary(port, headers):
        status, h, _ = request(port, auto, headers)
        return status, h.get("content-type"), h.get("vary"), h.get("etag")
    through, direct, plain = summary(cluster.nginx_port, webp), summary(cluster.ports[owner], webp), \
        summary(cluster.ports[owner], {})
    checks.check(through == direct and direct != plain and through[2] == "Accept",
                 "Accept reaches the instance through nginx (format=auto answer and Vary as asked directly)",
                 {"through nginx": through, "direct": direct, "direct without Accept": plain})

if __name__ == "__main__":
    main()
