"""The processes of the cluster test, all on 127.0.0.1: a python http.server
origin over SOURCES distinct small JPEGs, thumbd instances with their own
CACHE_DIRECTORY (as systemd/thumbd@.service gives them), and a real nginx
running the shipped Config/nginx-thumbd.conf with its ports substituted; plus
the HTTP client the test drives them with. With `shared` (an S3 endpoint and
its keys) every instance also has the shared originals store of
SeveralInstances.md, in the bucket SHARED_BUCKET under SHARED_PREFIX."""
import collections
import concurrent.futures
import hashlib
import http.client
import json
import os
import random
import secrets
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = 300
INSTANCES = 3
CLIENTS = 8              # concurrent client connections to nginx
REQUEST_TIMEOUT = 10     # seconds, per request
SHARED_BUCKET = "thumbd-shared"
SHARED_PREFIX = "thumbd/"


def free_ports(n):
    """n distinct ports, free now, from below the kernel's ephemeral range
    (Tests/ThumbTestSupport/FreePorts.swift says why): an ephemeral port can
    become some connection's source port before its server binds it (SeaweedFS
    binds its S3 port seconds after it starts; a killed instance is restarted
    on the port it had)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    ports = []
    while len(ports) < n:
        if low <= 11000:
            candidate = 0   # no room below the range: the kernel picks, as before
        else:
            candidate = random.randrange(10000, low)
            if candidate in ports:
                continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", candidate))
            ports.append(s.getsockname()[1])
        except OSError:
            pass
        finally:
            s.close()
    return ports


def request(port, target, headers=None, method="GET", body=None):
    """One request on a fresh connection: (status, headers with lower-case names, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        conn.request(method, target, body=body, headers=headers or {})
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

    def run(self, targets, on_progress=None):
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
    def __init__(self, binary, work, sources=SOURCES, shared=None):
        """`shared`: None, or {"endpoint", "accessKeyId", "secretAccessKey"} of
        the S3 store holding the shared originals store."""
        self.binary, self.work, self.sources, self.shared = binary, work, sources, shared
        ports = free_ports(INSTANCES + 2)
        self.origin_port, self.nginx_port, self.ports = ports[0], ports[1], ports[2:]
        self.instances = [None] * INSTANCES
        self.caches = [os.path.join(work, "cache", f"i{k}") for k in range(INSTANCES)]
        self.origin = self.nginx = None
        os.makedirs(os.path.join(work, "tmp"))
        os.chmod(work, 0o755)  # nginx workers run as nobody when the test runs as root

    # -- processes --------------------------------------------------------

    def start_origin(self):
        images = os.path.join(self.work, "origin")
        os.mkdir(images)
        base = open(os.path.join(ROOT, "Tests/ThumbCodecTests/Fixtures/testorig.jpg"), "rb").read()
        assert base[:2] == b"\xff\xd8"
        for i in range(self.sources):
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
        config = {"listen": f"127.0.0.1:{self.ports[k]}", "origin": {"allowPrivateNetworks": True},
                  "log": {"accessLog": False}}
        if self.shared:
            # The fleet's key: every instance signs its sidecars with it and trusts no other.
            key_file = os.path.join(self.work, "shared.key")
            if not os.path.exists(key_file):
                with open(key_file, "w") as f:
                    f.write(secrets.token_hex(32) + "\n")
            config["diskStore"] = {"shared": {"bucket": SHARED_BUCKET, "prefix": SHARED_PREFIX, "keyFile": key_file}}
            config["s3"] = dict(self.shared, timeoutSeconds=10)
        json.dump(config, open(path, "w"))
        return path

    def start_instance(self, k, cache=None):
        """Instance k on its port, on its cache directory, or on `cache` (a
        name under cache/) from now on: a new machine in its place."""
        if cache:
            self.caches[k] = os.path.join(self.work, "cache", cache)
        env = {key: v for key, v in os.environ.items()
               if key not in ("NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "WATCHDOG_USEC", "JOURNAL_STREAM")}
        env["HOME"] = self.work
        env["CACHE_DIRECTORY"] = self.caches[k]
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
            # Twice: the hashed group and POST /info's round-robin one.
            if conf.count(old) != 2:
                raise RuntimeError(f"Config/nginx-thumbd.conf no longer has two '{old}'")
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

    def digest(self, i):
        """DiskStore.name(for:): the name of source i's original on disk and, under
        SHARED_PREFIX, in the shared store."""
        return hashlib.sha256(self.source(i).encode()).hexdigest()

    def stored_sources(self, k):
        """Sources whose original is in instance k's disk store: the store names
        each file by the SHA-256 of its source URL (DiskStore.name(for:))."""
        by_digest = {self.digest(i): i for i in range(self.sources)}
        found = set()
        for _, _, files in os.walk(os.path.join(self.caches[k], "originals")):
            found.update(by_digest[f] for f in files if f in by_digest)
        return found
