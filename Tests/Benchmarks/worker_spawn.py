#!/usr/bin/env python3
"""Times the start of a render worker the way the daemon starts one (Isolation.md):
`thumbd __worker PARENT-PID [UID:GID]` (the ids of `nobody` when run as root, as a root daemon
passes sandbox.user's) with a SOCK_SEQPACKET channel on descriptor 3, from the
spawn until its `ready` frame (libraries loaded and warmed up, sandbox entered).
Prints the median, minimum and maximum of COUNT starts in milliseconds.
Usage: worker_spawn.py THUMBD_BIN [COUNT]
"""
import json
import os
import pwd
import socket
import statistics
import subprocess
import sys
import time


def start(binary):
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fd = theirs.fileno()
    began = time.monotonic()
    # The shell moves the channel to descriptor 3 and becomes the worker (exec): its parent is this process.
    identity = ""
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        identity = f" {nobody.pw_uid}:{nobody.pw_gid}"
    child = subprocess.Popen(["/bin/sh", "-c", f'exec "$0" __worker {os.getpid()}{identity} 3<&{fd} {fd}<&-', binary],
                             pass_fds=(fd,), stdin=subprocess.DEVNULL,
                             env={"SWIFT_BACKTRACE": "enable=no", "MALLOC_ARENA_MAX": "1"})
    theirs.close()
    mine.settimeout(10)
    frame = mine.recv(65536)
    took = time.monotonic() - began
    assert "ready" in json.loads(frame), frame
    mine.close()   # the worker exits when its channel closes
    child.wait(timeout=10)
    return took * 1000


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    start(sys.argv[1])   # the binary and its libraries into the page cache
    times = [start(sys.argv[1]) for _ in range(count)]
    print(f"worker start to ready: median {statistics.median(times):.1f} ms "
          f"(min {min(times):.1f}, max {max(times):.1f}, {count} starts)")


if __name__ == "__main__":
    main()
