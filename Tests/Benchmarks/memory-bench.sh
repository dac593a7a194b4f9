#!/usr/bin/env bash
# Issue 34's memory figures against a release build, everything on 127.0.0.1
# (Tests/Benchmarks/memory_bench.py, whose header says what each part measures): the
# estimate of one render against its measured peak, per input format and width, and
# the daemon plus its workers (summed VmRSS, sampled every 0.2 s) under 8 clients of
# distinct heavy renders, against memoryCacheBytes + maxDecodeMemoryBytes +
# 2 x http.maxPendingResponseBytes + 64 MiB. Exit status 1 when the stress passes that
# bound or answers a 5xx. Root only (it resets the processes' peak RSS through
# /proc/PID/clear_refs). It takes about 3 minutes (STRESS=60).
# Usage: [THUMBD_BIN=path] [STRESS=seconds] [WORKERS=n] [PARTS=single,stress] \
#          Tests/Benchmarks/memory-bench.sh   (any directory; without THUMBD_BIN it builds
#        and runs the release thumbd)
# From a fresh clone (Debian, Swift 6; make-inputs.sh --formats installs its encoders):
#   git clone URL thumbd && cd thumbd && Tests/Benchmarks/memory-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_inputs --formats
BIN=$(bench_release_bin)
bench_init
timeout 900 python3 Tests/Benchmarks/memory_bench.py "$BIN" "$INPUTS" "$W"
