"""The parts of mix-bench.sh that are easier in Python: warming and checking each server,
CPU accounting of a server's whole process tree, CPU per render per source kind, and the report.

A server's CPU is utime + stime of every live process descending from its root pid (thumbd and
its render workers; thumbor's parent and its forked processes) plus cutime + cstime of each (the
children they have waited for), from /proc, in clock ticks.

    mix_bench.py warm NAME PORT WANT_XCACHE PATH...   every path (w 100) 200, a JPEG 100 wide; when WANT_XCACHE
                                                      is not "-", X-Cache must equal it
    mix_bench.py ticks ROOT_PID                       prints the tree's CPU ticks now
    mix_bench.py rss ROOT_PID                         prints the tree's summed peak RSS (VmHWM), MB
    mix_bench.py idle ROOT_PID                        waits (at most 30 s) until the tree's CPU stands still
    mix_bench.py cpu NAME ROOT_PID PORT N W0 KIND=PATH...
                                                      per kind, N sequential requests (w = W0, W0+1, ...)
                                                      on one connection; prints "cpu-NAME-KIND ms_cpu ms_wall"
    mix_bench.py report RESULTS                       medians over rounds, the table and the ratios
Paths hold "{W}" where the width goes.
"""
import http.client, os, statistics, sys, time

HZ = os.sysconf("SC_CLK_TCK")


def proc_table():
    """pid -> (ppid, own ticks, waited-for children's ticks) for every process readable now."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue  # ended between listdir and open
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
        # fields[0] is state (stat field 3): ppid is field 4, utime..cstime fields 14..17.
        table[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    return table


def tree(root, table):
    """root and every live process descending from it."""
    if root not in table:
        raise SystemExit(f"process {root} is gone")
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo, seen = [root], []
    while todo:  # bounded: each pid once
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(children.get(pid, []))
    return seen


def tree_ticks(root):
    table = proc_table()
    return sum(table[pid][1] + table[pid][2] for pid in tree(root, table))


def tree_peak_rss_mb(root):
    total = 0
    for pid in tree(root, proc_table()):
        try:
            with open(f"/proc/{pid}/status") as f:
                total += sum(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        except OSError:
            pass  # ended since
    return total / 1024


def wait_idle(root):
    """Until the tree's CPU has not moved for 0.4 s (three samples), at most 30 s."""
    last, still = tree_ticks(root), 0
    for _ in range(150):
        time.sleep(0.2)
        now = tree_ticks(root)
        still = still + 1 if now == last else 0
        if still >= 2:
            return
        last = now


def get(conn, path):
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    return response.status, response.getheader("Content-Type"), response.getheader("X-Cache"), body


def jpeg_width(body):
    """The width in the first SOFn segment, or None."""
    i = 2
    while i + 9 <= len(body) and body[i] == 0xFF:  # bounded: i grows every step
        marker, length = body[i + 1], int.from_bytes(body[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(body[i + 7:i + 9], "big")
        i += 2 + max(length, 2)
    return None


def warm(name, port, want_xcache, paths):
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
    for path in paths:
        status, ctype, xcache, body = get(conn, path.replace("{W}", "100"))
        if status != 200 or ctype != "image/jpeg" or body[:2] != b"\xff\xd8":
            raise SystemExit(f"{name}: {path}: {status} {ctype}, not a JPEG")
        if jpeg_width(body) != 100:
            raise SystemExit(f"{name}: {path}: a JPEG {jpeg_width(body)} wide, not 100")
        if want_xcache != "-" and xcache != want_xcache:
            raise SystemExit(f"{name}: {path}: X-Cache {xcache}, not {want_xcache}")


def cpu(name, root, port, n, w0, kinds):
    root, n, w0 = int(root), int(n), int(w0)
    for item in kinds:
        kind, path = item.split("=", 1)
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=120)
        wait_idle(root)
        before, walls = tree_ticks(root), []
        for i in range(n):
            start = time.monotonic()
            status, _, _, _ = get(conn, path.replace("{W}", str(w0 + i)))
            walls.append(time.monotonic() - start)
            if status != 200:
                raise SystemExit(f"{name}: {kind}: {status}")
        wait_idle(root)  # work after the answer (bookkeeping, logs) counts too
        spent = tree_ticks(root) - before
        conn.close()
        print(f"cpu-{name}-{kind} {spent * 1000 / HZ / n:.1f} {statistics.median(walls) * 1000:.1f}")


def report(path):
    rows = [line.split() for line in open(path) if line.strip()]

    def values(name, i):
        return [float(r[i]) for r in rows if r[0] == name]

    def med(name, i):
        v = values(name, i)
        return statistics.median(v) if v else float("nan")

    servers = ("thumbd", "thumbor")
    print("| server | req/s | p50 ms | p99 ms | CPU ms/request | non-2xx | socket errors | rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for s in servers:
        n = f"mix-{s}"
        print(f"| {s} | {med(n, 1):.1f} | {med(n, 2):.0f} | {med(n, 3):.0f} | {med(n, 6):.0f} | "
              f"{sum(values(n, 4)):.0f} | {sum(values(n, 5)):.0f} | {len(values(n, 1))} |")
    rps = med("mix-thumbd", 1) / med("mix-thumbor", 1)
    print(f"\nthumbd/thumbor req/s {rps:.2f} (target >= 1.5), p50 {med('mix-thumbd', 2) / med('mix-thumbor', 2):.2f}, "
          f"p99 {med('mix-thumbd', 3) / med('mix-thumbor', 3):.2f}, CPU per request "
          f"{med('mix-thumbd', 6) / med('mix-thumbor', 6):.2f}")
    kinds = []
    for r in rows:
        if r[0].startswith("cpu-thumbd-") and r[0][len("cpu-thumbd-"):] not in kinds:
            kinds.append(r[0][len("cpu-thumbd-"):])
    if kinds:
        print("\nOne request at a time, each kind alone (medians over rounds):")
        print("| source | thumbd CPU ms | thumbor CPU ms | CPU ratio | thumbd wall ms | thumbor wall ms |")
        print("|---|---|---|---|---|---|")
        for k in kinds:
            d, t = f"cpu-thumbd-{k}", f"cpu-thumbor-{k}"
            ratio = f"{med(d, 1) / med(t, 1):.2f}" if med(d, 1) > 0 and med(t, 1) > 0 else "-"  # under a clock tick
            print(f"| {k} | {med(d, 1):.0f} | {med(t, 1):.0f} | {ratio} | "
                  f"{med(d, 2):.0f} | {med(t, 2):.0f} |")
    rss = [r for r in rows if r[0].startswith("rss-")]
    if rss:
        print("\npeak RSS MB (live processes, summed): " + ", ".join(f"{r[0][4:]} {float(r[1]):.0f}" for r in rss))
    print("\nraw:", rows)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    command, args = sys.argv[1], sys.argv[2:]
    if command == "warm":
        warm(args[0], args[1], args[2], args[3:])
    elif command == "ticks":
        print(tree_ticks(int(args[0])))
    elif command == "rss":
        print(f"{tree_peak_rss_mb(int(args[0])):.0f}")
    elif command == "idle":
        wait_idle(int(args[0]))
    elif command == "cpu":
        cpu(args[0], args[1], args[2], args[3], args[4], args[5:])
    elif command == "report":
        report(args[0])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
