"""Issue 34's cases for attacks.py (its structure, helpers and bounds: attacks.py's
header): the sandbox and the stores as boundaries, seen from outside a release build.

  hero-pngs    a 4000x4000 and a 5000x5000 PNG asked at w=1500, 10 distinct retries
               each: every answer 200 or 422 image_too_large (never corrupt_image, the
               worker dying on its memory cap), each within limits.maxRenderSeconds + 1 s,
               /stats render.crashed still 0
  kill-loop    workers 2, limits.maxRenderSeconds 0.5: 24 distinct 4000x4000 noise WebPs
               (one libwebp call of 0.7-1.1 s here, so each job is killed at the deadline)
               from 2 clients (one per worker: a third would queue), while the daemon's
               children are counted every 10 ms: never more than 2 worker processes,
               render.killed > 0, each answer a 422 within maxRenderSeconds + 1 s; then the daemon is SIGKILLed mid-render and no worker, nor anything in a
               worker's process group, is left 5 s later. (Not 0.2 s: a job's deadline
               includes starting a replacement worker, so at 0.2 s a normal render beside
               the loop sometimes times out too, 2 of ~40 in one run in 3.)
  info-batch   info.maxBatchItems 1000, maxQueue 1024 (every item queued, none refused
               overloaded): one POST /info of 1000 distinct 4000x4000 PNGs answered within origin.timeoutSeconds + maxRenderSeconds + 1 s; the CPU
               of the daemon and its workers in the 5 s after the answer at most
               INFO_AFTER_CPU; info.abandoned > 0 (items were still out at the deadline);
               a new /thumbnail 1 s after the answer within 1 s, and one 3 s into the
               batch within 1 s too, like the normal thumbnails beside it all along: facts
               jobs hold at most half the render workers, so a render passes the batch's
               queued items on the other half
  full-disk    the disk store on a 4 MiB tmpfs the case mounts and fills before the
               daemon starts (root only; skipped, and said so, otherwise): 10 new
               sources, then 5 more from a daemon restarted on the full store, each
               200 within 1 s (normal thumbnails themselves) and counted in
               diskStore.writeFailures; the restarted daemon's peak within the bound too

The daemon's RSS and CPU that attacks.py samples include its workers' (from /proc).
"""
import http.client, json, os, signal, struct, subprocess, threading, time, zlib

from attacks import DEFAULTS, MIB, Daemon, children, in_parallel, quote, usage

# A bound from measurement (Results.md § Attacks on the boundaries): after the answer
# only the jobs already on a worker finish (one per worker, a 4000x4000 PNG's facts
# ~0.1 CPU-s here); the abandoned items cost nothing more. Measured 0.04-0.10 CPU-s;
# before issue 34 the same batch went on for 42 CPU-s.
INFO_AFTER_CPU = 1.0


def png(side, pixels):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    c = zlib.compressobj(6)
    body = b"".join(c.compress(b"\x00" + pixels(y)) for y in range(side)) + c.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", body) + chunk(b"IEND", b""))


def hero_png(side):
    """An RGB PNG of side x side diagonal stripes (small file, full-size decode)."""
    cycle = bytes(range(256)) * (3 * side // 256 + 2)
    return png(side, lambda y: cycle[y * 7 % 256:y * 7 % 256 + 3 * side])


def make_inputs(binary, files):
    for side in (4000, 5000):
        open(f"{files}/hero-{side}.png", "wb").write(hero_png(side))
    # Noise does not compress: libwebp's one decode call takes 0.7-1.1 s for 4000x4000 here.
    noise = f"{files}/noise-4000.png"
    open(noise, "wb").write(png(4000, lambda y: os.urandom(3 * 4000)))
    subprocess.run([binary, "thumbnail", noise, f"{files}/noise-4000.webp", "--w", "4000", "--q", "90"],
                   check=True, stdout=subprocess.DEVNULL)
    os.remove(noise)


def request(d, method, query, body=None, timeout=60):
    """(status, seconds, body) of one request on a new connection; status 0 when none came."""
    start = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=timeout)
        c.request(method, query, body=body, headers={"Content-Type": "application/json"} if body else {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, time.monotonic() - start, data
    except OSError:
        return 0, time.monotonic() - start, b""


def error_code(body):
    try:
        return json.loads(body).get("error", "")
    except ValueError:
        return ""


def hero_pngs(d, origin, work, beside):
    answers = {}
    for side in (4000, 5000):
        url = f"{origin.base}/hero-{side}.png"
        answers[side] = [request(d, "GET", f"/thumbnail?url={quote(f'{url}?retry={i}')}&w=1500", timeout=60)
                         for i in range(10)]
    crashed = d.stats()["render"].get("crashed", 0)
    limit = DEFAULTS["render"] + 1
    ok, notes = crashed == 0, []
    for side, got in answers.items():
        kinds = [str(status) if status == 200 else f"{status} {error_code(body)}" for status, _, body in got]
        ok &= all(k in ("200", "422 image_too_large") for k in kinds)
        ok &= max(t for _, t, _ in got) <= limit
        summary = ", ".join(f"{kinds.count(k)}x {k}" for k in sorted(set(kinds)))
        notes.append(f"{side}²: {summary}, slowest {max(t for _, t, _ in got):.1f} s")
    return None, ok, "; ".join(notes) + f"; crashed {crashed}"


def kill_loop(d, origin, work, beside):
    render = d.config["limits"]["maxRenderSeconds"]
    most, seen, sampling = [0], {}, threading.Event()
    def sample():
        while not sampling.is_set():
            found = children(d.proc.pid)
            most[0] = max(most[0], len(found))
            seen.update((pid, group) for pid, (group, _, _) in found.items())
            time.sleep(0.01)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    url = f"{origin.base}/noise-4000.webp"
    jobs = [lambda i=i: request(d, "GET", f"/thumbnail?url={quote(f'{url}?kill={i}')}&w=256", timeout=60)
            for i in range(24)]
    answers = in_parallel(jobs, d.config["workers"])
    killed = d.stats()["render"]["killed"]
    # The daemon killed outright in the middle of renders: its workers must go with it.
    beside.finish()   # (what is beside it would fail from here on)
    late = [threading.Thread(target=request, args=(d, "GET", f"/thumbnail?url={quote(f'{url}?last={i}')}&w=256"),
                             daemon=True) for i in range(2)]
    for t in late: t.start()
    for _ in range(500):   # until one is on a worker (the decode outlasts the deadline)
        if d.stats()["render"]["active"] > 0:
            break
        time.sleep(0.01)
    time.sleep(0.1)
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait(10)
    sampling.set()
    sampler.join()
    def left():
        groups = set(seen.values())
        alive = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and (int(entry) in seen or int(fields[2]) in groups):
                alive.append(int(entry))
        return alive
    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = left()
    codes = sorted({(s, error_code(b)) for s, _, b in answers})
    slowest = max(t for _, t, _ in answers)
    ok = (most[0] <= d.config["workers"] and killed > 0 and not survivors
          and all(s == 422 for s, _, _ in answers) and slowest <= render + 1)
    return None, ok, (f"{len(answers)} answers {codes}, slowest {slowest:.2f} s; killed {killed}; at most {most[0]} "
                      f"workers at once ({len(seen)} seen); after SIGKILL {len(survivors)} left")


def info_batch(d, origin, work, beside):
    items = [{"url": f"{origin.base}/hero-4000.png?item={i}"} for i in range(1000)]
    during = []
    def wait_during():
        time.sleep(3)
        during.append(request(d, "GET", f"/thumbnail?url={quote(origin.base + '/normal.jpg?during')}&w=256", timeout=60))
    waiting = threading.Thread(target=wait_during, daemon=True)
    waiting.start()
    status, seconds, body = request(d, "POST", "/info", json.dumps({"items": items}).encode(), timeout=60)
    answered = time.monotonic()
    cpu0 = usage(d.proc.pid)[1]
    answers = json.loads(body).get("items", []) if status == 200 else []
    errors = {}
    for a in answers:
        errors[a.get("error", "facts")] = errors.get(a.get("error", "facts"), 0) + 1
    time.sleep(max(0, answered + 1 - time.monotonic()))
    live = request(d, "GET", f"/thumbnail?url={quote(origin.base + '/normal.jpg?live')}&w=256", timeout=10)
    time.sleep(max(0, answered + 5 - time.monotonic()))
    cpu5 = usage(d.proc.pid)[1]
    info = d.stats()["info"]
    waiting.join(60)
    during_answer = list(during)
    during = f"{during[0][0]} in {during[0][1]:.2f} s" if during else "no answer"
    deadline = d.config.get("origin", {}).get("timeoutSeconds", 10) + DEFAULTS["render"] + 1
    ok = (status == 200 and len(answers) == 1000 and seconds <= deadline and cpu5 - cpu0 <= INFO_AFTER_CPU
          and info.get("abandoned", 0) > 0 and live[0] == 200 and live[1] <= 1.0
          and bool(during_answer) and during_answer[0][0] == 200 and during_answer[0][1] <= 1.0)
    return None, ok, (f"answer {status} in {seconds:.1f} s (≤ {deadline}), items {errors}, abandoned {info.get('abandoned', 'not counted')}; "
                      f"CPU in the 5 s after {cpu5 - cpu0:.2f} s (≤ {INFO_AFTER_CPU}); "
                      f"live render at +1 s {live[0]} in {live[1]:.2f} s; one 3 s into the batch: {during} (≤ 1 s)")


def full_disk_mount(work):
    """The case's store: a 4 MiB tmpfs, made full before the daemon starts (the attack's
    case: every write fails). Root only: without it the case is skipped."""
    if os.geteuid() != 0:
        return {}
    mount = f"{work}/full-disk"
    os.makedirs(mount, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=256", "tmpfs", mount], check=True)
    os.makedirs(f"{mount}/store")
    with open(f"{mount}/filler", "wb") as f:
        try:
            while True:
                f.write(bytes(64 << 10))
                f.flush()
        except OSError:
            pass
    return {"diskStore": {"path": f"{mount}/store"}}


def full_disk_unmount(work):
    if os.path.ismount(f"{work}/full-disk"):
        subprocess.run(["umount", f"{work}/full-disk"], check=False)


def full_disk(d, origin, work, beside):
    if os.geteuid() != 0:
        return None, None, "skipped: mounting the tmpfs needs root (run as root, as CI does)"
    results, failures, peaks = [], [], []
    for i in range(10):
        results.append(d.get(f"/thumbnail?url={quote(f'{origin.base}/normal.jpg?full={i}')}&w=256", 10))
    failures.append(d.stats()["diskStore"].get("writeFailures", 0))
    # Restarted on the full store: a second daemon (what is beside the first stops with it).
    beside.finish()
    d.stop()
    again = Daemon(d.binary, work, "full-disk-restart", {"diskStore": d.config["diskStore"]})
    try:
        for i in range(5):
            results.append(again.get(f"/thumbnail?url={quote(f'{origin.base}/normal.jpg?restart={i}')}&w=256", 10))
        failures.append(again.stats()["diskStore"].get("writeFailures", 0))
    finally:
        again.stop()
    peak = max((sample[0] for sample in again.samples), default=0)
    codes = sorted({s for s, _, _ in results})
    slowest = max(t for _, t, _ in results)
    ok = codes == [200] and all(f >= n for f, n in zip(failures, (10, 5))) and slowest <= 1.0 and peak <= again.bound()
    return None, ok, (f"{len(results)} new sources (10, 5 after a restart) {codes}, slowest {slowest:.2f} s; "
                      f"writeFailures {failures}; restarted daemon's peak RSS {peak / MIB:.0f} MiB")
full_disk.prepare, full_disk.cleanup = full_disk_mount, full_disk_unmount


# Each case takes attacks.py's Beside as a fourth argument; one with starts_beside starts it;
# prepare(work) gives config before the daemon starts, cleanup(work) runs after it stopped.
CASES = [
    ("hero-pngs", hero_pngs, {}),
    ("kill-loop", kill_loop, {"limits": {"maxRenderSeconds": 0.5}}),
    ("info-batch", info_batch, {"info": {"maxBatchItems": 1000}, "maxQueue": 1024}),
    ("full-disk", full_disk, {}),
]
