"""The cluster test's second run (SeveralInstances.md, issue 25): three
instances with the shared originals store (diskStore.shared) in one SeaweedFS,
behind the shipped nginx file, over a smaller origin.

  1. Every source once through nginx: each fetched from the origin once,
     after a shared-store miss; then every original is written to the bucket
     (sharedStore.writes sum to the sources, each instance writing what it
     fetched), as one object and one sidecar under the prefix.
  2. SIGKILL one instance: its sources are answered by the others from the
     shared store (X-Cache: disk, the same ETags), with no origin fetch.
  3. A new instance with an empty disk in its place, asked directly for
     every source: all from the shared store, no origin fetch.
  4. POST /info through nginx goes round-robin, one batch to each instance,
     and its items read the shared store (exactly the sources each instance
     did not hold), with no origin fetch.
"""
import json
import os
import time
import urllib.parse

from cluster_processes import INSTANCES, SHARED_PREFIX, Client, request

SHARED_SOURCES = 60
VARIANT = "w=64"
WRITES_LIMIT = 30        # seconds for the background writes to reach the bucket


def index(target):
    """The source number in a /thumbnail target (its file is img-NNN.jpg)."""
    return int(target.split("img-", 1)[1][:3])


def run_shared_phases(cluster, client, store, bucket, checks):
    n = cluster.sources
    everything = set(range(n))
    names = {cluster.name(i) for i in everything}

    def stats():
        return [cluster.stats(k) for k in range(INSTANCES)]

    def shared(s, key):
        return [x["sharedStore"][key] for x in s]

    # 1. Every source once, through nginx.
    results = client.run([cluster.target(i, VARIANT) for i in range(n)])
    etags = {index(t): h.get("etag") for t, s, h in results}
    bad = [(t, s, h.get("x-cache")) for t, s, h in results if s != 200 or h.get("x-cache") != "origin"]
    seen = cluster.origin_fetches()
    first = stats()
    fetches = [x["origin"]["fetches"] for x in first]
    checks.check(not bad and set(seen) == names and set(seen.values()) == {1} and sum(fetches) == n
                 and shared(first, "misses") == fetches and sum(shared(first, "hits")) == 0,
                 f"shared pass 1: {n} sources through nginx, each fetched from the origin once after a shared-store miss",
                 {"bad": bad[:3], "origin paths": len(seen), "fetches": fetches, "misses": shared(first, "misses"),
                  "hits": shared(first, "hits")})

    deadline = time.monotonic() + WRITES_LIMIT
    written = first
    while time.monotonic() < deadline and sum(shared(written, "writes")) + sum(shared(written, "writeFailures")) < n:
        time.sleep(0.1)
        written = stats()
    checks.check(shared(written, "writes") == fetches and sum(shared(written, "writeFailures")) == 0,
                 f"shared pass 1: sharedStore.writes sum to {n} within {WRITES_LIMIT} s, each instance writing what it fetched",
                 {"writes": shared(written, "writes"), "fetches": fetches,
                  "writeFailures": shared(written, "writeFailures")})
    keys = [k for k in store.keys(bucket) if k.startswith(SHARED_PREFIX)]
    expected = {SHARED_PREFIX + cluster.digest(i) + suffix for i in everything for suffix in ("", ".json")}
    checks.check(len(keys) == len(expected) and set(keys) == expected,
                 f"shared pass 1: the bucket holds one object and one sidecar per source under {SHARED_PREFIX}",
                 f"{len(keys)} keys, {len(set(keys) - expected)} unexpected, {len(expected - set(keys))} missing")

    # 2. SIGKILL one instance: the others serve its sources from the shared store.
    victim = 1
    survivors = [k for k in range(INSTANCES) if k != victim]
    lost = cluster.stored_sources(victim)
    before = written
    cluster.kill_instance(victim)
    results = client.run([cluster.target(i, VARIANT) for i in sorted(lost)])
    after = [cluster.stats(k) for k in survivors]
    bad = [(t, s, h.get("x-cache")) for t, s, h in results
           if s != 200 or h.get("x-cache") != "disk" or h.get("etag") != etags[index(t)]]
    checks.check(lost and len(results) == len(lost) and not bad,
                 f"shared pass 2: instance {victim} SIGKILLed, its {len(lost)} sources answered 200 by the others "
                 "from the shared store (X-Cache: disk, the same ETags)", bad[:3])
    gained = [after[j]["sharedStore"]["hits"] - before[k]["sharedStore"]["hits"] for j, k in enumerate(survivors)]
    checks.check(cluster.origin_fetches() == seen
                 and [x["origin"]["fetches"] for x in after] == [before[k]["origin"]["fetches"] for k in survivors]
                 and sum(gained) == len(lost)
                 and [x["sharedStore"]["misses"] for x in after] == [before[k]["sharedStore"]["misses"] for k in survivors],
                 f"shared pass 2: 0 new origin fetches, the survivors' sharedStore.hits grew by {len(lost)}",
                 {"hits gained": gained, "origin": [x["origin"]["fetches"] for x in after]})

    # 3. A new instance with an empty disk where the dead one was, asked directly.
    cluster.start_instance(victim, cache=f"i{victim}-new")
    results = Client(cluster.ports[victim]).run([cluster.target(i, VARIANT) for i in range(n)])
    fresh = cluster.stats(victim)
    bad = [(t, s, h.get("x-cache")) for t, s, h in results
           if s != 200 or h.get("x-cache") != "disk" or h.get("etag") != etags[index(t)]]
    checks.check(len(results) == n and not bad,
                 f"shared pass 3: a new instance with an empty disk serves all {n} sources from the shared store "
                 "(asked directly; X-Cache: disk, the same ETags)", bad[:3])
    store_counts = fresh["sharedStore"]
    checks.check(fresh["origin"]["fetches"] == 0 and cluster.origin_fetches() == seen
                 and store_counts["hits"] == n and store_counts["misses"] == 0 and store_counts["writes"] == 0
                 and store_counts["readFailures"] == 0 and store_counts["rejected"] == 0
                 and fresh["diskStore"]["misses"] == n
                 and cluster.stored_sources(victim) == everything,
                 f"shared pass 3: 0 origin fetches, sharedStore.hits {n}, every original copied to its disk",
                 {"origin": fresh["origin"]["fetches"], "sharedStore": store_counts,
                  "diskStore.misses": fresh["diskStore"]["misses"], "on disk": len(cluster.stored_sources(victim))})

    # 4. POST /info through nginx: round-robin, its items read the shared store.
    reference = min(cluster.stored_sources(0))
    status, _, body = request(cluster.ports[0], "/info?url=" + urllib.parse.quote(cluster.source(reference), safe=""))
    facts = {k: v for k, v in json.loads(body).items() if k not in ("url", "bytes")} if status == 200 else None
    held = [len(cluster.stored_sources(k)) for k in range(INSTANCES)]
    before = stats()
    batch = json.dumps({"items": [{"url": cluster.source(i)} for i in range(n)]}).encode()
    answers = [request(cluster.nginx_port, "/info", {"Content-Type": "application/json"}, "POST", batch)
               for _ in range(INSTANCES)]
    after = stats()
    posted = [after[k]["info"]["requests"] - before[k]["info"]["requests"] for k in range(INSTANCES)]
    checks.check(posted == [1] * INSTANCES,
                 f"shared pass 4: POST /info through nginx goes round-robin, one batch to each of the {INSTANCES} instances",
                 posted)
    sizes = {cluster.source(i): os.path.getsize(os.path.join(cluster.work, "origin", cluster.name(i))) for i in everything}
    wrong = []
    for st, _, b in answers:
        items = json.loads(b).get("items", []) if st == 200 else []
        if st != 200 or len(items) != n:
            wrong.append((st, len(items)))
        for item, i in zip(items, range(n)):
            if item.get("url") != cluster.source(i) or item.get("bytes") != sizes[cluster.source(i)] \
                    or {k: v for k, v in item.items() if k not in ("url", "bytes")} != facts:
                wrong.append(item)
    checks.check(facts and facts.get("format") == "jpeg" and not wrong,
                 f"shared pass 4: {INSTANCES} batches of {n} items answered with the facts of a direct GET /info",
                 {"reference": facts, "wrong": wrong[:2]})
    gained = [after[k]["sharedStore"]["hits"] - before[k]["sharedStore"]["hits"] for k in range(INSTANCES)]
    checks.check(gained == [n - h for h in held] and sum(gained) > 0 and cluster.origin_fetches() == seen
                 and [x["origin"]["fetches"] for x in after] == [x["origin"]["fetches"] for x in before]
                 and shared(after, "misses") == shared(before, "misses"),
                 "shared pass 4: its items read the shared store (each instance exactly the sources not on its disk), "
                 "0 origin fetches", {"hits gained": gained, "not on disk": [n - h for h in held]})
