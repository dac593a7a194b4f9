"""The decoders' floor (issue 39), driven by floor-bench.sh: CPU per 256-px thumbnail of
each input for thumbd (misses from disk: a running daemon's CPU, its own and its worker
processes', per render), libvips 8.18 (PyPI pyvips-binary) and Debian's libvips 8.14
(both in process: thumbnail_buffer + jpegsave_buffer, one thread, operation cache off),
in alternating rounds; then the wall time of one cold HEIC request on an idle daemon.
Prints a Markdown table of medians.

  python3 floor_bench.py --port P --origin-port O --inputs DIR --rounds N --renders K \
      --vips818 PYTHON --vips814 PYTHON --daemon-pid PID --cold-port C
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

# (label, file, renders per round as a multiple of --renders): the inputs of make-inputs.sh
# --formats, as the table lists them. The kernel counts a process's CPU in 10 ms
# ticks: the 4 MP JPEG's ~10 ms renders come in larger batches.
INPUTS = [
    ("4 MP baseline JPEG", "jpeg-4mp.jpg", 6),
    ("12 MP progressive JPEG", "jpeg-12mp-progressive.jpg", 2),
    ("12 MP PNG", "png-12mp-rgb.png", 1),
    ("12 MP lossy WebP", "webp-12mp.webp", 2),
    ("12 MP HEIC, no thumbnail item", "heic-12mp.heic", 1),
    ("12 MP HEIC grid (an iPhone's 8x6 tiles), no thumbnail item", "heic-12mp-grid.heic", 1),
    ("12 MP AVIF", "avif-12mp.avif", 1),
]

# One libvips process per round and input: K thumbnails of the file, CPU seconds per
# thumbnail on stdout (the first, which loads the library's modules, is left out).
VIPS = r"""
import os, sys, time
os.environ["VIPS_CONCURRENCY"] = "1"
import pyvips
pyvips.cache_set_max(0)
data = open(sys.argv[1], "rb").read()
k = int(sys.argv[2])
def one():
    pyvips.Image.thumbnail_buffer(data, 256).jpegsave_buffer(Q=82)
try:
    one()
except pyvips.Error as e:
    print("nan", pyvips.version(0), pyvips.version(1), "unsupported"); sys.exit(0)
t = time.process_time()
for _ in range(k):
    one()
print((time.process_time() - t) / k, pyvips.version(0), pyvips.version(1), "ok")
"""


def tree_cpu(pid):
    """CPU seconds of pid and every descendant alive, plus what its dead children used."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    children = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(p))
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12])       # utime, stime
        if p == pid:
            total += int(f[13]) + int(f[14])   # cutime, cstime: workers that exited
        stack.extend(children.get(p, []))
    return total / tick


def get(port, query, timeout=600):
    url = f"http://127.0.0.1:{port}/thumbnail?{query}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
            return r.status, r.headers.get("X-Cache", ""), len(body)
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{url}: {e.code} {e.read()[:300]!r}")


def wait_idle(port, seconds=60):
    """Until the daemon's render queue is empty (facts computed after an answer, too)."""
    end = time.time() + seconds
    while time.time() < end:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10) as r:
            render = json.load(r).get("render", {})
        if render.get("active", 0) == 0 and render.get("queued", 0) == 0:
            return
        time.sleep(0.2)


def thumbd_round(args, name, round_index, renders):
    """CPU per render of `renders` misses (distinct widths near 256, the original on disk)."""
    src = urllib.parse.quote(f"http://127.0.0.1:{args.origin_port}/{name}", safe="")
    base = 256 - round_index * renders
    before = tree_cpu(args.daemon_pid)
    for i in range(renders):
        status, cache, _ = get(args.port, f"url={src}&w={base - i}&format=jpeg&q=82")
        assert status == 200 and cache != "memory", (name, status, cache)
    return (tree_cpu(args.daemon_pid) - before) / renders


def vips_round(python, path, k):
    out = subprocess.run([python, "-c", VIPS, path, str(k)], capture_output=True, text=True, check=True)
    seconds, major, minor, state = out.stdout.split()
    return (float(seconds) if state == "ok" else float("nan")), f"{major}.{minor}"


def cold_heic(args):
    """Wall time of one request of a source the daemon has never seen, nothing else running."""
    times = []
    for r in range(args.rounds):
        src = urllib.parse.quote(f"http://127.0.0.1:{args.origin_port}/cold-{r}.heic", safe="")
        wait_idle(args.cold_port)
        t = time.monotonic()
        status, _, _ = get(args.cold_port, f"url={src}&w=256&format=jpeg&q=82")
        times.append(time.monotonic() - t)
        assert status == 200
        wait_idle(args.cold_port)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--port", "--origin-port", "--daemon-pid", "--cold-port", "--rounds", "--renders"):
        ap.add_argument(a, type=int, required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--vips818", required=True)
    ap.add_argument("--vips814", required=True)
    args = ap.parse_args()

    # Each original onto disk, its facts computed, before any round.
    for _, name, _ in INPUTS:
        src = urllib.parse.quote(f"http://127.0.0.1:{args.origin_port}/{name}", safe="")
        get(args.port, f"url={src}&w=32")
    wait_idle(args.port)

    results = {name: {"thumbd": [], "818": [], "814": []} for _, name, _ in INPUTS}
    versions = {}
    for r in range(args.rounds):
        for _, name, times in INPUTS:
            path = os.path.join(args.inputs, name)
            renders = args.renders * times
            # Alternating: the order of the three changes every round.
            order = [("thumbd", None), ("818", args.vips818), ("814", args.vips814)]
            order = order[r % 3:] + order[:r % 3]
            for key, python in order:
                if key == "thumbd":
                    wait_idle(args.port)
                    results[name][key].append(thumbd_round(args, name, r, renders))
                else:
                    seconds, version = vips_round(python, path, renders)
                    versions[key] = version
                    results[name][key].append(seconds)

    def ms(xs):
        xs = [x for x in xs if x == x]
        return f"{statistics.median(xs) * 1000:.0f}" if xs else "n/a"

    print(f"| source | thumbd | libvips {versions.get('818', '8.18')} (PyPI pyvips-binary) "
          f"| libvips {versions.get('814', '8.14')} (Debian) | thumbd / best libvips |")
    print("|---|---|---|---|---|")
    for label, name, _ in INPUTS:
        row = results[name]
        t = statistics.median(row["thumbd"])
        peers = [statistics.median([x for x in row[k] if x == x]) for k in ("818", "814") if any(x == x for x in row[k])]
        ratio = f"{t / min(peers):.2f}" if peers else "n/a"
        print(f"| {label} | {ms(row['thumbd'])} | {ms(row['818'])} | {ms(row['814'])} | {ratio} |")
    print()
    print(f"One cold 12 MP HEIC grid request (w=256) on an idle daemon, wall time: "
          f"{cold_heic(args) * 1000:.0f} ms (median of {args.rounds})")


if __name__ == "__main__":
    main()
