#!/usr/bin/env bash
# Where a memory hit's CPU goes, beside nginx serving the same bytes (issue 27 item 3): one
# release daemon with a 256-px JPEG variant in memory and nginx (worker_processes 1, sendfile,
# tcp_nopush, open_file_cache) serving that file, both on 127.0.0.1, each under wrk -t1 -c64
# -d$BENCH_SECONDS (default 10). Per server: requests, CPU microseconds per request (user and
# system, from /proc), syscalls and context switches per request (perf stat), and the share of
# its CPU in each part of the work (perf record, grouped by the library or kernel area a sample
# falls in). Needs perf usable (root, or perf_event_paranoid <= 1).
# Usage: Tests/Benchmarks/hit-profile.sh      (any directory)
# A quick trial run: BENCH_SECONDS=2 Tests/Benchmarks/hit-profile.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
SECONDS_RUN=${BENCH_SECONDS:-10}
bash .ci/deps.sh wrk nginx
bench_inputs
BIN=$(bench_release_bin)
bench_init
HZ=$(getconf CLK_TCK)
mkdir "$W/origin" "$W/static" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
chmod 755 "$W" "$W/static"
bench_origin "$W/origin" 18470
SRC="http%3A%2F%2F127.0.0.1%3A18470%2Fphoto.jpg"
cat > "$W/d.json" <<CONF
{"listen": "127.0.0.1:18471", "origin": {"allowPrivateNetworks": true}, "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
bench_daemon "$BIN" "$W/d.json" 18471 /dev/null; THUMBD=$BENCH_PID
HIT="http://127.0.0.1:18471/thumbnail?url=$SRC&w=256&h=256"
curl -sf --max-time 60 -o "$W/static/thumb.jpg" "$HIT"
chmod 644 "$W/static/thumb.jpg"
cat > "$W/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $W/nginx.pid; error_log $W/nginx.err;
events { worker_connections 2048; }
http { access_log off; client_body_temp_path $W; proxy_temp_path $W; fastcgi_temp_path $W; uwsgi_temp_path $W; scgi_temp_path $W;
  sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 100000; open_file_cache max=100 inactive=60s;
  server { listen 127.0.0.1:18472; location / { root $W/static; try_files /thumb.jpg =404; } } }
CONF
bench_bg nginx -c "$W/nginx.conf"; bench_wait_port 18472
NGINX=$(pgrep -P "$(cat "$W/nginx.pid")" | head -1)   # the one worker
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
run() { # NAME PID URL
  local u0 s0 u1 s1 out reqs
  read -r u0 s0 < <(ticks "$2")
  perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$2" -o "$W/$1.stat" -- sleep "$((SECONDS_RUN + 1))" &
  local perf=$!
  perf record -F 999 -g -p "$2" -o "$W/$1.perf" -- sleep "$SECONDS_RUN" >/dev/null 2>&1 &
  local rec=$!
  out=$(wrk -t1 -c64 -d"${SECONDS_RUN}s" --latency "$3")
  wait "$rec" || true; wait "$perf" || true
  read -r u1 s1 < <(ticks "$2")
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "$1 $reqs $(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1 == "99%" {print $2}') $((u1 - u0)) $((s1 - s0))" >> "$W/results"
  perf report -i "$W/$1.perf" --no-children --sort dso,sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' > "$W/$1.top"
}
wrk -t1 -c64 -d2s "$HIT" >/dev/null; wrk -t1 -c64 -d2s http://127.0.0.1:18472/thumb.jpg >/dev/null
run thumbd "$THUMBD" "$HIT"
run nginx "$NGINX" http://127.0.0.1:18472/thumb.jpg
python3 - "$W" "$HZ" <<'PY'
import sys
w, hz = sys.argv[1], int(sys.argv[2])
for line in open(w + "/results"):
    name, reqs, rps, p99, ut, st = line.split()
    reqs = int(reqs)
    stat = {}
    for l in open(f"{w}/{name}.stat"):
        parts = l.strip().split(",")
        if len(parts) > 2 and parts[0] not in ("", "<not counted>"):
            try: stat[parts[2]] = float(parts[0])
            except ValueError: pass
    us = lambda t: t / hz / reqs * 1e6
    print(f"## {name}: {reqs} requests, {rps} req/s, p99 {p99}")
    print(f"CPU per request: {us(int(ut) + int(st)):.1f} us (user {us(int(ut)):.1f}, system {us(int(st)):.1f}); "
          f"syscalls {stat.get('raw_syscalls:sys_enter', 0) / reqs:.2f}, context switches {stat.get('context-switches', 0) / reqs:.3f} per request")
    # Each sample's symbol into one part of the work; the shares times the CPU per request.
    parts = [
        ("copying bytes (kernel)", ("_copy_from_iter", "_copy_to_iter", "copy_user", "copy_folio", "memcpy_orig")),
        ("sendfile/splice (kernel)", ("splice", "filemap_", "page_cache", "folio")),
        ("scheduling, wake-ups, locks (kernel)", ("finish_task_switch", "schedule", "_raw_spin", "futex", "try_to_wake", "ttwu", "select_task", "enqueue_", "dequeue_", "update_", "pick_next", "psi_", "sched")),
        ("epoll (kernel)", ("ep_", "epoll")),
        ("TCP/IP and sockets (kernel)", ("tcp_", "ip_", "__ip", "skb", "__skb", "net_", "__net", "sock_", "__sock", "loopback", "__tcp", "inet_", "__inet", "dev_", "__dev", "bbr_", "release_sock", "lock_sock", "__napi", "napi", "validate_xmit", "__netif", "netif", "kfree", "kmem_cache", "__alloc_skb", "__kmalloc", "kmalloc", "__kfree", "do_softirq", "__local_bh", "handle_softirqs", "sk_", "__sk")),
        ("syscall entry/exit, perf's own tracepoints (kernel)", ("do_syscall", "syscall_", "x64_sys_call", "entry_SYSCALL", "perf_", "fdget", "__x64_sys", "exit_to_user", "irqentry", "__fget", "fput", "__fdget")),
        ("other kernel", ("[k]",)),
        ("Swift runtime (retain/release, metadata)", ("swift_", "$ss", "swift::")),
        ("malloc/free", ("malloc", "free", "_int_", "cfree", "tcache")),
        ("Dispatch", ("dispatch", "_dispatch")),
        ("the server's own code", ("$s", "ngx_")),
        ("other user space", ("",)),
    ]
    totals = {p[0]: 0.0 for p in parts}
    for row in open(f"{w}/{name}.top"):
        f = row.split()
        if not f or not f[0].endswith("%"): continue
        pct = float(f[0][:-1]); text = " ".join(f[1:])
        kernel = "[k]" in text
        sym = text.split("] ", 1)[1] if "] " in text else text
        for label, keys in parts:
            if ("(kernel)" in label or label == "other kernel") != kernel: continue
            if label == "other kernel" or label == "other user space" or any(sym.startswith(k) or k in sym for k in keys):
                totals[label] += pct; break
    cpu = us(int(ut) + int(st))
    print("| part of the work | share of samples | us per request |\n|---|---|---|")
    for label, _ in parts:
        print(f"| {label} | {totals[label]:.1f} % | {cpu * totals[label] / 100:.2f} |")
    print()
PY
