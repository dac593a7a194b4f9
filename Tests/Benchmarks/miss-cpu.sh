#!/usr/bin/env bash
# CPU per render of a miss from disk (daemon + its workers, user + system), two thumbd binaries
# paired round by round, A then B, so a drifting machine hits both alike: the 4 MP JPEG of
# make-inputs.sh, memoryCacheBytes 0, 200 distinct widths per run, workers 2 (Tests/Benchmarks/miss_cpu.py
# says how the CPU is counted). Everything on 127.0.0.1.
# Usage: Tests/Benchmarks/miss-cpu.sh BIN_A BIN_B [ROUNDS [COUNT]]   (default 9 rounds of 200 misses)
# Run it as root to include a root daemon's worker privilege drop (Isolation.md § Privileges).
set -euo pipefail
A=$(realpath "${1:?usage: miss-cpu.sh BIN_A BIN_B [ROUNDS [COUNT]]}"); B=$(realpath "${2:?usage}")
ROUNDS=${3:-9} COUNT=${4:-200}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_inputs
bench_init
mkdir "$W/origin" && cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18320
python3 Tests/Benchmarks/miss_cpu.py "$A" "$B" "http://127.0.0.1:18320/photo.jpg" "$ROUNDS" "$COUNT" "$W"
