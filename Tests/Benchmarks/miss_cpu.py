#!/usr/bin/env python3
"""CPU per render of misses from disk, two thumbd binaries paired round by round (miss-cpu.sh runs it).

Each round starts each binary in turn on a disk store that already holds the original (one request
fetched it first, outside the count), asks COUNT distinct widths with the memory cache off (every one a
render from disk: probe, decode, scale, encode in a worker), sends SIGTERM and waits: the daemon ends its
workers and reaps them, so this process's RUSAGE_CHILDREN grows by the daemon's and its workers' user +
system CPU. CPU per render = that growth / COUNT (the start-up and the first fetch are counted in both
builds alike and are under 2 % of it). Prints each round's figures, the medians and the B/A ratio per
round and its median. Loopback only; each round is bounded by the requests' own time-outs.
"""
import json, os, resource, signal, statistics, subprocess, sys, tempfile, time, urllib.parse, urllib.request


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wait_port(port, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return
        except Exception:
            time.sleep(0.05)
    raise SystemExit(f"nothing answered on 127.0.0.1:{port}")


def one_run(binary, work, source, port, count):
    store = tempfile.mkdtemp(dir=work)
    config = os.path.join(work, f"config-{port}.json")
    with open(config, "w") as f:
        json.dump({"listen": f"127.0.0.1:{port}", "memoryCacheBytes": 0, "workers": 2,
                   "origin": {"allowPrivateNetworks": True}, "diskStore": {"path": store},
                   "log": {"accessLog": False}}, f)
    url = urllib.parse.quote(source, safe="")
    before = children_cpu()
    daemon = subprocess.Popen([binary, "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        urllib.request.urlopen(f"http://127.0.0.1:{port}/thumbnail?url={url}&w=64", timeout=60).read()
        for i in range(count):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/thumbnail?url={url}&w={100 + i}", timeout=60) as r:
                assert r.status == 200 and r.headers["X-Cache"] == "disk", r.headers["X-Cache"]
                r.read()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
    return (children_cpu() - before) / count * 1000


def main():
    a, b, source, rounds, count, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    figures = {"A": [], "B": []}
    ratios = []
    for r in range(rounds):
        for side, binary, port in (("A", a, 18321), ("B", b, 18322)):
            figures[side].append(one_run(binary, work, source, port, count))
        ratios.append(figures["B"][-1] / figures["A"][-1])
        print(f"round {r + 1}: A {figures['A'][-1]:.2f} ms  B {figures['B'][-1]:.2f} ms  B/A {ratios[-1]:.3f}", flush=True)
    print(f"CPU per miss from disk (daemon + workers), median of {rounds}: "
          f"A {statistics.median(figures['A']):.2f} ms, B {statistics.median(figures['B']):.2f} ms; "
          f"B/A per round: median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
