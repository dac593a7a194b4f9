#!/usr/bin/env bash
# The test suite under strace, watching close(2) only (a seccomp filter, so the
# rest runs at full speed): any close of a non-negative descriptor that fails
# with EBADF, outside a spawned child's close-everything loop, fails the run.
# Such a close is the visible half of a double close; the invisible half is the
# same close landing after the number was handed out again, when it shuts some
# other thread's socket (two CI runs lost a churn exchange to a reset and a
# CacheHeaderTests exchange that way). Each report carries the stack.
# Usage: .ci/double-closes.sh            (from the repository root; needs a debug test build)
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh strace
TRACE=$(mktemp) LOG=$(mktemp); trap 'rm -f "$TRACE" "$LOG"' EXIT
# A shorter churn: it is here for the closes it makes, not for its minute. The
# suite's own verdict belongs to the plain run before this step; here a test
# that fails (strace stops every close, which shifts timings) is printed, not
# fatal, and the closes of the whole run are still judged.
if ! THUMBD_CHURN_SECONDS=10 strace -f --seccomp-bpf -e trace=close -Z -k -o "$TRACE" swift test --skip-build >"$LOG" 2>&1; then
  echo "the suite under strace did not pass; its failures, for the record:"
  grep -E "✘|recorded an issue|Fatal error|error:" "$LOG" | head -40 || true
fi
python3 - "$TRACE" <<'PY'
import re, sys
entries, current = [], None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith(" > "):
        if current: current[1].append(line[3:].rstrip())
    else:
        current = (line.rstrip(), []); entries.append(current)
bad = [(head, stack) for head, stack in entries
       if re.search(r"close\((\d+)\)\s+= -1 EBADF", head)
       and not any("posix_spawn" in f or "closefrom" in f for f in stack)]
for head, stack in bad:
    print(head); print("\n".join("    " + f for f in stack[:12]))
print(f"double closes: {len(bad)} close(2) calls failed with EBADF")
sys.exit(1 if bad else 0)
PY
