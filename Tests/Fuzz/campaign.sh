#!/usr/bin/env bash
# A longer campaign, one target at a time at low priority (nice 10): each target
# for its share of MINUTES, new inputs kept in OUT/<name>/ for minimizing
# (-merge=1) into Tests/Fuzz/corpus/<name>/, the figures in OUT/<name>.log.
# A finding stops that target (its reproducer is in fuzz-artifacts/) and the
# campaign goes on with the next one.
# Usage: Tests/Fuzz/campaign.sh MINUTES OUT [name...]   (default: all six targets)
set -uo pipefail
cd "$(dirname "$0")/../.."
MINUTES=$1 OUT=$2; shift 2
NAMES=("$@"); [ ${#NAMES[@]} -gt 0 ] || NAMES=(origin config json codec http structure)
SECONDS_EACH=$(( MINUTES * 60 / ${#NAMES[@]} ))
mkdir -p "$OUT"
for name in "${NAMES[@]}"; do
  echo "$(date -u +%H:%M:%S) $name for $SECONDS_EACH s"
  FUZZ_NEW_CORPUS="$OUT/$name" nice -n 10 bash "Tests/Fuzz/fuzz-$name.sh" "$SECONDS_EACH" > "$OUT/$name.log" 2>&1
  echo "$(date -u +%H:%M:%S) $name exit $?"; grep -E 'DONE|stat::' "$OUT/$name.log"
done
